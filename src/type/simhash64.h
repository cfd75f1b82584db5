/*-------------------------------------------------------------------------
 *
 * simhash64.h
 *	  The simhash64 type: a 64-bit fingerprint, passed by value.
 *
 * Values are compared as unsigned 64-bit integers, so that the order of
 * the values agrees with the order of their hex text form.
 *
 * src/type/simhash64.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH64_H
#define SIMHASH64_H

#include "fmgr.h"

typedef uint64 simhash64;

/* Same representation as int8 under USE_FLOAT8_BYVAL (required, see below) */
#define DatumGetSimhash64(X)	((simhash64) (X))
#define Simhash64GetDatum(X)	((Datum) (X))

#define PG_GETARG_SIMHASH64(n)	DatumGetSimhash64(PG_GETARG_DATUM(n))
#define PG_RETURN_SIMHASH64(x)	return Simhash64GetDatum(x)

/* Text input, also used by types that embed a simhash64 */
extern Datum simhash64_in(PG_FUNCTION_ARGS);
extern Datum simhash64_out(PG_FUNCTION_ARGS);

/* The SQL type is declared PASSEDBYVALUE, which needs 8-byte Datums */
#ifndef USE_FLOAT8_BYVAL
#error "simhash64 requires a 64-bit build (USE_FLOAT8_BYVAL)"
#endif

#endif							/* SIMHASH64_H */
