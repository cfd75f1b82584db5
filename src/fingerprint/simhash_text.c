/*-------------------------------------------------------------------------
 *
 * simhash_text.c
 *		simhash(text): the fingerprint of a document's shingles.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "shared/progress.h"
#include "core/nd_simhash.h"
#include "fingerprint/text_features.h"
#include "pg_compat.h"
#include "type/simhash64.h"

/*
 * simhash(doc text, shingle int4, unit text, seed int8) → simhash64, or NULL
 * when the text has no tokens at all.
 */
PG_FUNCTION_INFO_V1(nd_simhash_text);
Datum
nd_simhash_text(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	NdTextParams p = nd_text_params(fcinfo, 1, 2, 3);
	nd_simhash_acc acc;
	uint64		fp;

	nd_progress_fingerprint(ND_FINGERPRINT_SIMHASH, VARSIZE_ANY_EXHDR(doc));
	nd_simhash_init(&acc);
	nd_text_features(doc, &p, nd_simhash_sink, &acc, NULL, NULL);
	if (!nd_simhash_result(&acc, &fp))
		PG_RETURN_NULL();
	PG_RETURN_SIMHASH64(fp);
}
