/*-------------------------------------------------------------------------
 *
 * text_features.h
 *		Text → features for SQL functions: parameter checks and a driver that
 *		runs the server-free shingler over a text datum, piece by piece, so
 *		that a long document stays cancellable.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TEXT_FEATURES_H
#define TEXT_FEATURES_H

#include "postgres.h"

#include "core/nd_features.h"

/* Parameters every text → features function takes. */
typedef struct NdTextParams
{
	int			shingle;
	nd_unit		unit;
	uint64		seed;
} NdTextParams;

/*
 * Reads (shingle int4, unit text, seed int8) from the given argument
 * positions, checks them and reports bad values as errors.  A position < 0
 * means the function has no such argument: shingle 1, unit word, seed 0.
 */
extern NdTextParams nd_text_params(FunctionCallInfo fcinfo, int shingle_arg,
								   int unit_arg, int seed_arg);

/*
 * s (*len bytes in the database encoding) as UTF-8: s itself in a UTF8 or
 * SQL_ASCII database (SQL_ASCII bytes are taken as they are), else a
 * palloc'd conversion, *len updated.
 */
extern const char *nd_server_to_utf8(const char *s, size_t *len);

/*
 * nd_hash_bytes() of a text datum's UTF-8 bytes: a feature string hashes
 * the same whatever the database encoding.
 */
extern uint64 nd_hash_text(text *t, uint64 seed);

/*
 * Runs the shingler over doc (converted to UTF-8 when the database encoding
 * is not), handing features to sink and, when token_sink is not NULL, tokens
 * to token_sink.
 */
extern void nd_text_features(text *doc, const NdTextParams *params,
							 nd_feature_sink sink, void *sink_arg,
							 nd_token_sink token_sink, void *token_arg);

/*
 * Feature hashes collected in order, in a buffer that grows up to `limit`
 * elements (then a program_limit_exceeded error): nd_feature_list_add is an
 * nd_feature_sink for nd_text_features().
 */
typedef struct NdFeatureList
{
	uint64	   *v;
	size_t		n;
	size_t		cap;
	size_t		limit;
} NdFeatureList;

extern void nd_feature_list_init(NdFeatureList *fl, size_t limit);
extern void nd_feature_list_add(void *fl, const uint64_t *features, size_t n);

#endif							/* TEXT_FEATURES_H */
