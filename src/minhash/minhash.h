/*-------------------------------------------------------------------------
 *
 * minhash.h
 *		Shared by the MinHash SQL functions: reading a signature argument.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINHASH_H
#define MINHASH_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"

/*
 * The int4[] signature at argument argno: one-dimensional, no NULLs, not
 * empty, at most ND_MINHASH_MAX_PERM values; *len gets its length.  Returns
 * a pointer to the values, read as uint32.
 */
extern const uint32 *nd_minhash_sig_arg(FunctionCallInfo fcinfo, int argno, int *len);

/* The same checks on a detoasted int4[] value. */
extern const uint32 *nd_minhash_sig_array(ArrayType *arr, int *len);

/* LSH parameters for a recall at a threshold (minhash_lsh.c) */
extern void nd_check_lsh_recall(float8 recall);
extern void nd_lsh_params_for_recall(float8 threshold, int k, float8 recall,
									 int *bands, int *rows);

#endif							/* MINHASH_H */
