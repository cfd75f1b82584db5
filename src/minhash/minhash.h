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

#endif							/* MINHASH_H */
