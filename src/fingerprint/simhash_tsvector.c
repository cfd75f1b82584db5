/*-------------------------------------------------------------------------
 *
 * simhash_tsvector.c
 *		simhash(tsvector): PostgreSQL's text search configurations as the
 *		tokenizer (stemming, stop words, many languages).
 *
 * The lexemes are put back in document order by their positions, then
 * shingled and hashed exactly like the tokens of simhash(text).  Lexemes
 * without positions (a stripped tsvector) cannot be ordered: each counts as
 * a feature of its own.  Position weights (A-D) are ignored.  PostgreSQL
 * caps positions at 16383, so past that point the order of lexemes is lost
 * (they are taken in lexeme order); doc/fingerprints.md says so.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "tsearch/ts_type.h"

#include "shared/progress.h"
#include "core/nd_features.h"
#include "core/nd_simhash.h"
#include "fingerprint/text_features.h"
#include "pg_compat.h"
#include "type/simhash64.h"

typedef struct LexemeAt
{
	uint16		pos;
	int32		lexeme;			/* index into the tsvector's entries */
} LexemeAt;

static int
cmp_lexeme_at(const void *a, const void *b)
{
	const LexemeAt *x = a;
	const LexemeAt *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return (x->lexeme > y->lexeme) - (x->lexeme < y->lexeme);
}

/* A lexeme as a token, in UTF-8 as simhash(text) reads its text. */
static void
push_lexeme(nd_shingler *sh, const char *lexeme, size_t len)
{
	const char *utf8 = nd_server_to_utf8(lexeme, &len);

	nd_shingler_push_token(sh, utf8, len);
	if (utf8 != lexeme)
		pfree((char *) utf8);
}

/* simhash(doc tsvector, shingle int4, seed int8) */
PG_FUNCTION_INFO_V1(nd_simhash_tsvector);
Datum
nd_simhash_tsvector(PG_FUNCTION_ARGS)
{
	TSVector	tsv = PG_GETARG_TSVECTOR(0);
	NdTextParams p = nd_text_params(fcinfo, 1, -1, 2);
	WordEntry  *entries = ARRPTR(tsv);
	char	   *strings = STRPTR(tsv);
	nd_simhash_acc acc;
	nd_shingler *ordered,
			   *unordered;
	LexemeAt   *seq;
	int			nseq = 0;
	uint64		fp;

	nd_progress_fingerprint(ND_FINGERPRINT_SIMHASH, VARSIZE(tsv));
	nd_simhash_init(&acc);
	ordered = palloc(sizeof(nd_shingler));
	unordered = palloc(sizeof(nd_shingler));
	nd_shingler_init(ordered, p.shingle, ND_UNIT_WORD, p.seed, nd_simhash_sink, &acc);
	nd_shingler_init(unordered, 1, ND_UNIT_WORD, p.seed, nd_simhash_sink, &acc);

	/* every (position, lexeme) occurrence, then document order */
	for (int i = 0; i < tsv->size; i++)
		nseq += POSDATALEN(tsv, &entries[i]);
	seq = palloc(Max(nseq, 1) * sizeof(LexemeAt));
	nseq = 0;
	for (int i = 0; i < tsv->size; i++)
	{
		WordEntry  *we = &entries[i];
		int			npos = POSDATALEN(tsv, we);

		if (npos == 0)
		{
			push_lexeme(unordered, strings + we->pos, we->len);
			continue;
		}
		for (int j = 0; j < npos; j++)
		{
			seq[nseq].pos = WEP_GETPOS(POSDATAPTR(tsv, we)[j]);
			seq[nseq].lexeme = i;
			nseq++;
		}
	}
	qsort(seq, nseq, sizeof(LexemeAt), cmp_lexeme_at);

	for (int i = 0; i < nseq; i++)
	{
		WordEntry  *we = &entries[seq[i].lexeme];

		if ((i & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		push_lexeme(ordered, strings + we->pos, we->len);
	}
	nd_shingler_finish(ordered);
	nd_shingler_finish(unordered);

	if (!nd_simhash_result(&acc, &fp))
		PG_RETURN_NULL();
	PG_RETURN_SIMHASH64(fp);
}
