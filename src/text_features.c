/*-------------------------------------------------------------------------
 *
 * text_features.c
 *		Text → features: the shared driver and the introspection functions
 *		text_tokens(), text_shingles() and shingle_hashes(), which show what
 *		simhash(text) (and later minhash(text)) see.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "text_features.h"

/* Bytes handed to the shingler between two interrupt checks. */
#define FEED_PIECE	(1024 * 1024)

NdTextParams
nd_text_params(FunctionCallInfo fcinfo, int shingle_arg, int unit_arg, int seed_arg)
{
	NdTextParams p;
	const char *problem;

	p.shingle = shingle_arg >= 0 ? PG_GETARG_INT32(shingle_arg) : 1;
	p.unit = ND_UNIT_WORD;
	if (unit_arg >= 0)
	{
		char	   *unit = text_to_cstring(PG_GETARG_TEXT_PP(unit_arg));

		if (pg_strcasecmp(unit, "word") == 0)
			p.unit = ND_UNIT_WORD;
		else if (pg_strcasecmp(unit, "char") == 0)
			p.unit = ND_UNIT_CHAR;
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid unit \"%s\"", unit),
					 errhint("Valid units are \"word\" and \"char\".")));
	}
	p.seed = seed_arg >= 0 ? (uint64) PG_GETARG_INT64(seed_arg) : 0;

	problem = nd_shingler_check(p.shingle, p.unit);
	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid shingle size %d", p.shingle),
				 errdetail("%s.", problem)));
	return p;
}

void
nd_text_features(text *doc, const NdTextParams *params,
				 nd_feature_sink sink, void *sink_arg,
				 nd_token_sink token_sink, void *token_arg)
{
	const char *s = VARDATA_ANY(doc);
	size_t		len = VARSIZE_ANY_EXHDR(doc);
	char	   *utf8 = NULL;
	nd_shingler *sh;

	/* fingerprints must not depend on the database encoding */
	if (GetDatabaseEncoding() != PG_UTF8 && len > 0)
	{
		utf8 = pg_server_to_any(s, (int) len, PG_UTF8);
		if (utf8 != s)
		{
			s = utf8;
			len = strlen(utf8);
		}
	}

	/* ~3 kB: keep it off the stack */
	sh = palloc(sizeof(nd_shingler));
	nd_shingler_init(sh, params->shingle, params->unit, params->seed, sink, sink_arg);
	sh->token_sink = token_sink;
	sh->token_arg = token_arg;

	for (size_t off = 0; off < len; off += FEED_PIECE)
	{
		CHECK_FOR_INTERRUPTS();
		nd_shingler_feed(sh, s + off, Min(len - off, (size_t) FEED_PIECE));
	}
	nd_shingler_finish(sh);

	pfree(sh);
	if (utf8 && utf8 != VARDATA_ANY(doc))
		pfree(utf8);
}

/* ---- introspection ---------------------------------------------------- */

/* Collects the tokens' text, as an array of text. */
typedef struct TokenCollector
{
	StringInfoData cur;
	ArrayBuildState *tokens;
	MemoryContext cxt;
} TokenCollector;

static void
collect_token(void *arg, const uint8_t *bytes, size_t len, bool last)
{
	TokenCollector *tc = arg;

	appendBinaryStringInfo(&tc->cur, (const char *) bytes, (int) len);
	if (last)
	{
		text	   *t = cstring_to_text_with_len(tc->cur.data, tc->cur.len);

		tc->tokens = accumArrayResult(tc->tokens, PointerGetDatum(t), false,
									  TEXTOID, tc->cxt);
		pfree(t);
		resetStringInfo(&tc->cur);
	}
}

static void
ignore_features(void *arg, const uint64_t *features, size_t n)
{
}

/* All tokens of doc, in order. */
static ArrayBuildState *
tokens_of(text *doc, nd_unit unit)
{
	TokenCollector tc;
	NdTextParams p = {.shingle = 1,.unit = unit,.seed = 0};

	initStringInfo(&tc.cur);
	tc.cxt = CurrentMemoryContext;
	tc.tokens = initArrayResult(TEXTOID, tc.cxt, false);
	nd_text_features(doc, &p, ignore_features, NULL, collect_token, &tc);
	pfree(tc.cur.data);
	return tc.tokens;
}

PG_FUNCTION_INFO_V1(nd_text_tokens);
Datum
nd_text_tokens(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	NdTextParams p = nd_text_params(fcinfo, -1, 1, -1);

	PG_RETURN_DATUM(makeArrayResult(tokens_of(doc, p.unit), CurrentMemoryContext));
}

/*
 * The shingles as text: tokens joined by a space (word unit) or nothing
 * (char unit, where a space is a token of its own).
 */
PG_FUNCTION_INFO_V1(nd_text_shingles);
Datum
nd_text_shingles(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	NdTextParams p = nd_text_params(fcinfo, 1, 2, -1);
	ArrayBuildState *toks = tokens_of(doc, p.unit);
	ArrayBuildState *out = initArrayResult(TEXTOID, CurrentMemoryContext, false);
	const char *sep = p.unit == ND_UNIT_WORD ? " " : "";
	int			n = toks->nelems;
	int			k = Min(p.shingle, n);
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; n > 0 && i + k <= n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		resetStringInfo(&buf);
		for (int j = i; j < i + k; j++)
		{
			text	   *t = (text *) DatumGetPointer(toks->dvalues[j]);

			if (j > i)
				appendStringInfoString(&buf, sep);
			appendBinaryStringInfo(&buf, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
		}
		out = accumArrayResult(out, PointerGetDatum(cstring_to_text_with_len(buf.data, buf.len)),
							   false, TEXTOID, CurrentMemoryContext);
	}
	PG_RETURN_DATUM(makeArrayResult(out, CurrentMemoryContext));
}

/* The feature hashes simhash(text) votes with, as bigint. */
typedef struct HashCollector
{
	int64	   *v;
	size_t		n;
	size_t		cap;
} HashCollector;

static void
collect_hashes(void *arg, const uint64_t *features, size_t n)
{
	HashCollector *hc = arg;

	if (hc->n + n > hc->cap)
	{
		if (hc->cap >= MaxArraySize / 2)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many shingles for an array"),
					 errdetail("An array holds at most %d elements.", (int) MaxArraySize)));
		hc->cap *= 2;
		hc->v = repalloc_huge(hc->v, hc->cap * sizeof(int64));
	}
	memcpy(hc->v + hc->n, features, n * sizeof(int64));
	hc->n += n;
}

PG_FUNCTION_INFO_V1(nd_shingle_hashes);
Datum
nd_shingle_hashes(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	NdTextParams p = nd_text_params(fcinfo, 1, 2, 3);
	HashCollector hc;

	hc.cap = 1024;
	hc.n = 0;
	hc.v = palloc(hc.cap * sizeof(int64));
	nd_text_features(doc, &p, collect_hashes, &hc, NULL, NULL);
	PG_RETURN_ARRAYTYPE_P(construct_array((Datum *) hc.v, (int) hc.n, INT8OID,
										  sizeof(int64), true, TYPALIGN_DOUBLE));
}
