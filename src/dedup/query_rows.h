/*-------------------------------------------------------------------------
 *
 * query_rows.h
 *		Reading the rows of a caller's query, for the dedup functions that
 *		take one (simhash_pairs, dedup_clusters).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_QUERY_ROWS_H
#define ND_QUERY_ROWS_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "fmgr.h"

/*
 * checks the query's columns before the first row is read; est_rows is the
 * planner's estimate of its rows (-1 if unknown), for sizing buffers
 */
typedef void (*nd_query_shape_fn) (TupleDesc desc, double est_rows, void *arg);

/* one row: its first two columns (a second is NULL if there is one column) */
typedef void (*nd_query_row_fn) (Datum *values, bool *nulls, void *arg);

extern void nd_query_for_each_row(const char *query, const char *what,
								  const char *hint, nd_query_shape_fn shape,
								  nd_query_row_fn row, void *arg);

/*
 * "SELECT col1, col2 FROM relation", quoted, for the functions' table
 * forms: run as the caller, so that the caller's SELECT privilege and row
 * security apply.  42P01 / 42703 for a missing relation or column.
 */
extern char *nd_rel_query(Oid relid, const char *col1, const char *col2);

/*
 * The same for a table named by text (looked up as a regclass input is)
 * and text column names: the functions' forms that take three string
 * literals.
 */
extern char *nd_relname_query(text *relname, text *col1, text *col2);

/*
 * The dedup family's rule for NULL arguments (doc/dedup.md): a required
 * argument (a table, a column, a query, a radius, a threshold) that is
 * NULL is an error, 22004 naming it -- never an empty answer that looks
 * like "no duplicates".  Arguments whose NULL means something (blocks,
 * bands and rows: choose) are not checked.
 */
extern void nd_require_arg(FunctionCallInfo fcinfo, int argno, const char *name);

extern bool nd_is_int_type(Oid basetype);
extern int64 nd_int_datum(Datum d, Oid basetype);

#endif							/* ND_QUERY_ROWS_H */
