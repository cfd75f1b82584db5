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

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "fingerprint/text_features.h"

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

/*
 * Fingerprints must not depend on the database encoding, so text is read
 * as UTF-8.  SQL_ASCII text has no known encoding: its bytes are read as
 * they are (invalid UTF-8 separating tokens), where converting them would
 * reject the first byte above 127.
 */
static inline bool
encoding_converts(void)
{
	int			enc = GetDatabaseEncoding();

	return enc != PG_UTF8 && enc != PG_SQL_ASCII;
}

const char *
nd_server_to_utf8(const char *s, size_t *len)
{
	char	   *utf8;

	if (!encoding_converts() || *len == 0)
		return s;
	utf8 = pg_server_to_any(s, (int) *len, PG_UTF8);
	if (utf8 != s)
		*len = strlen(utf8);
	return utf8;
}

uint64
nd_hash_text(text *t, uint64 seed)
{
	const char *s = VARDATA_ANY(t);
	size_t		len = VARSIZE_ANY_EXHDR(t);
	const char *utf8 = nd_server_to_utf8(s, &len);
	uint64		h = nd_hash_bytes(utf8, len, seed);

	if (utf8 != s)
		pfree((char *) utf8);
	return h;
}

void
nd_text_features(text *doc, const NdTextParams *params,
				 nd_feature_sink sink, void *sink_arg,
				 nd_token_sink token_sink, void *token_arg)
{
	const char *raw = VARDATA_ANY(doc);
	size_t		len = VARSIZE_ANY_EXHDR(doc);
	const char *s = nd_server_to_utf8(raw, &len);
	nd_shingler *sh;

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
	if (s != raw)
		pfree((char *) s);
}

/* ---- introspection ---------------------------------------------------- */

/*
 * The tokens of a document, back to back in one buffer, with where each
 * ends: a few bytes of overhead per token, so that looking at the tokens
 * of a large document costs about as much memory as the result itself.
 */
typedef struct TokenList
{
	StringInfoData bytes;
	uint32	   *ends;			/* ends[i]: offset just past token i */
	int			n;
	int			cap;
	bool		to_server;		/* convert tokens from UTF-8 to the db's encoding */
	Oid			conv_proc;		/* UTF-8 to the db's encoding, if to_server */
} TokenList;

/*
 * Appends a UTF-8 string converted to the database encoding.  A character
 * the encoding cannot hold (LATIN1 has the micro sign but not the Greek mu
 * it folds to) is written as a \uXXXX (\UXXXXXXXX above U+FFFF) escape, as
 * in E'' strings, instead of failing: the tokens are only shown, and the
 * fingerprints hash the UTF-8 text whatever the encoding.
 */
static void
append_in_server_encoding(StringInfo out, Oid proc, const char *utf8, int len)
{
	int			enc = GetDatabaseEncoding();

	while (len > 0)
	{
		int			room = len * MAX_CONVERSION_GROWTH + 1;
		int			done;

		enlargeStringInfo(out, room);
		done = pg_do_encoding_conversion_buf(proc, PG_UTF8, enc,
											 (unsigned char *) utf8, len,
											 (unsigned char *) out->data + out->len,
											 room, true);
		out->len += strlen(out->data + out->len);
		utf8 += done;
		len -= done;
		if (len > 0)
		{
			/* valid UTF-8 (the tokenizer wrote it): one character */
			int			clen = Min(pg_utf_mblen((const unsigned char *) utf8), len);
			pg_wchar	c = utf8_to_unicode((const unsigned char *) utf8);

			appendStringInfo(out, c > 0xFFFF ? "\\U%08X" : "\\u%04X", (unsigned) c);
			utf8 += clen;
			len -= clen;
		}
	}
}

static void
collect_token(void *arg, const uint8_t *bytes, size_t len, bool last)
{
	TokenList  *tl = arg;

	appendBinaryStringInfo(&tl->bytes, (const char *) bytes, (int) len);
	if (last && tl->to_server)
	{
		/*
		 * The tokenizer reads and writes UTF-8; a token returned as text of
		 * another database encoding must be in that encoding.
		 */
		int			start = tl->n == 0 ? 0 : (int) tl->ends[tl->n - 1];
		int			len = tl->bytes.len - start;
		char	   *utf8 = pnstrdup(tl->bytes.data + start, len);

		tl->bytes.len = start;
		tl->bytes.data[start] = '\0';
		append_in_server_encoding(&tl->bytes, tl->conv_proc, utf8, len);
		pfree(utf8);
	}
	if (last)
	{
		if (tl->n == tl->cap)
		{
			if (tl->cap >= (int) MaxArraySize / 2)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("too many tokens for an array")));
			tl->cap *= 2;
			tl->ends = repalloc_huge(tl->ends, tl->cap * sizeof(uint32));
		}
		tl->ends[tl->n++] = (uint32) tl->bytes.len;
	}
}

static void
ignore_features(void *arg, const uint64_t *features, size_t n)
{
}

static void
tokens_of(text *doc, nd_unit unit, TokenList *tl)
{
	NdTextParams p = {.shingle = 1,.unit = unit,.seed = 0};

	initStringInfo(&tl->bytes);
	tl->n = 0;
	tl->cap = 64;
	tl->ends = palloc(tl->cap * sizeof(uint32));
	tl->to_server = encoding_converts();
	if (tl->to_server)
	{
		tl->conv_proc = FindDefaultConversionProc(PG_UTF8, GetDatabaseEncoding());
		if (!OidIsValid(tl->conv_proc))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("default conversion function for encoding \"%s\" to \"%s\" does not exist",
							pg_enc2name_tbl[PG_UTF8].name,
							GetDatabaseEncodingName())));
	}
	nd_text_features(doc, &p, ignore_features, NULL, collect_token, tl);
}

static inline uint32
token_start(const TokenList *tl, int i)
{
	return i == 0 ? 0 : tl->ends[i - 1];
}

/*
 * A text[] whose element i joins tokens i .. i+k-1 with sep: the tokens
 * (k = 1) or the shingles.  Built in place rather than one datum at a time.
 */
static ArrayType *
joined_tokens_array(const TokenList *tl, int nelems, int k, const char *sep)
{
	size_t		seplen = strlen(sep);
	Size		size = ARR_OVERHEAD_NONULLS(1);
	ArrayType  *arr;
	char	   *p;

	if (nelems == 0)
		return construct_empty_array(TEXTOID);	/* the canonical '{}' */

	for (int i = 0; i < nelems; i++)
	{
		size += INTALIGN(VARHDRSZ + (tl->ends[i + k - 1] - token_start(tl, i)) +
						 (k - 1) * seplen);
		if (size > MaxAllocSize)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("array size exceeds the maximum allowed (%d)", (int) MaxAllocSize)));
	}

	arr = palloc0(size);
	SET_VARSIZE(arr, size);
	arr->ndim = 1;
	arr->dataoffset = 0;
	arr->elemtype = TEXTOID;
	ARR_DIMS(arr)[0] = nelems;
	ARR_LBOUND(arr)[0] = 1;

	p = ARR_DATA_PTR(arr);
	for (int i = 0; i < nelems; i++)
	{
		char	   *d = p + VARHDRSZ;

		if ((i & 65535) == 0)
			CHECK_FOR_INTERRUPTS();
		for (int j = i; j < i + k; j++)
		{
			uint32		start = token_start(tl, j);

			if (j > i)
			{
				memcpy(d, sep, seplen);
				d += seplen;
			}
			memcpy(d, tl->bytes.data + start, tl->ends[j] - start);
			d += tl->ends[j] - start;
		}
		SET_VARSIZE(p, d - p);
		p += INTALIGN(d - p);
	}
	return arr;
}

PG_FUNCTION_INFO_V1(nd_text_tokens);
Datum
nd_text_tokens(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	NdTextParams p = nd_text_params(fcinfo, -1, 1, -1);
	TokenList	tl;

	tokens_of(doc, p.unit, &tl);
	PG_RETURN_ARRAYTYPE_P(joined_tokens_array(&tl, tl.n, 1, ""));
}

/*
 * The shingles as text: tokens joined by a space (word unit) or nothing
 * (char unit, where a space is a token of its own).  A text with fewer
 * tokens than a shingle has one shingle of all of them, as for hashing.
 */
PG_FUNCTION_INFO_V1(nd_text_shingles);
Datum
nd_text_shingles(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	NdTextParams p = nd_text_params(fcinfo, 1, 2, -1);
	TokenList	tl;
	int			k;

	tokens_of(doc, p.unit, &tl);
	k = Min(p.shingle, tl.n);
	PG_RETURN_ARRAYTYPE_P(joined_tokens_array(&tl, tl.n == 0 ? 0 : tl.n - k + 1, k,
											  p.unit == ND_UNIT_WORD ? " " : ""));
}

void
nd_feature_list_init(NdFeatureList *fl, size_t limit)
{
	fl->cap = 1024;
	fl->n = 0;
	fl->limit = limit;
	fl->v = palloc(fl->cap * sizeof(uint64));
}

void
nd_feature_list_add(void *arg, const uint64_t *features, size_t n)
{
	NdFeatureList *fl = arg;

	if (fl->n + n > fl->cap)
	{
		if (fl->n + n > fl->limit)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many shingles"),
					 errdetail("At most %zu can be collected here.", fl->limit)));
		while (fl->n + n > fl->cap)
			fl->cap *= 2;
		fl->cap = Min(fl->cap, fl->limit);
		fl->v = repalloc_huge(fl->v, fl->cap * sizeof(uint64));
	}
	memcpy(fl->v + fl->n, features, n * sizeof(uint64));
	fl->n += n;
}

/* The feature hashes simhash(text) votes with, as bigint. */
PG_FUNCTION_INFO_V1(nd_shingle_hashes);
Datum
nd_shingle_hashes(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	NdTextParams p = nd_text_params(fcinfo, 1, 2, 3);
	NdFeatureList fl;

	nd_feature_list_init(&fl, MaxArraySize);
	nd_text_features(doc, &p, nd_feature_list_add, &fl, NULL, NULL);
	PG_RETURN_ARRAYTYPE_P(construct_array((Datum *) fl.v, (int) fl.n, INT8OID,
										  sizeof(int64), true, TYPALIGN_DOUBLE));
}
