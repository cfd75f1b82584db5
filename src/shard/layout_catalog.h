/*-------------------------------------------------------------------------
 *
 * layout_catalog.h
 *		A block-sharded layout, named by its view, as the catalogs give it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LAYOUT_CATALOG_H
#define LAYOUT_CATALOG_H

#include "pg_compat.h"

/* A layout named by its view: its schema, name, blocks and first copy. */
typedef struct Layout
{
	Oid			nsp;
	const char *name;
	int			blocks;
	Oid			copy1;			/* <name>_b1, partitioned by simhash_block(sh, 1, blocks) */
} Layout;

extern void layout_find(Oid view, Oid ext_nsp, Layout *l);
pg_noreturn extern void layout_not_found(Oid view);

#endif							/* LAYOUT_CATALOG_H */
