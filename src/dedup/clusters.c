/*-------------------------------------------------------------------------
 *
 * clusters.c
 *		dedup_clusters(pairs_query text): the connected components of the
 *		graph whose edges are the pairs a query returns, as (id, cluster_id)
 *		rows, cluster_id being the smallest id of the component.  The query
 *		returns two ids per row (an edge), or one array of ids per row (a
 *		group already known to be one cluster, such as a GROUP BY's
 *		array_agg or a shard's cluster of a block-sharded layout).
 *
 * The query runs through SPI as the calling user (as tablefunc's crosstab
 * does), so pairs can come from anywhere: a GIN self-join, simhash_pairs(),
 * a table of pairs kept from earlier runs, MinHash band joins.  Its rows are
 * read one at a time (query_rows.c); only the disjoint sets are kept in memory
 * (nd_unionfind.c, 24 bytes per distinct id, plus a hash table from id to
 * index, doc/dedup-keep-one.md gives the total), never the pairs.
 *
 * The disjoint sets stay within a hash aggregate's memory (work_mem times
 * hash_mem_multiplier).  When the next batch of edges would take them past
 * it, they are written out (each id with its set's smallest id) and every
 * later edge is kept on the side; clusters_spill.c joins the two in rounds
 * of external sorts: slower, bounded by work_mem.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/nodeHash.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "shared/context_realloc.h"
#include "shared/progress.h"
#include "core/nd_mix.h"
#include "core/nd_unionfind.h"
#include "dedup/clusters_spill.h"
#include "dedup/query_rows.h"

static inline uint32
id_hash(int64 id)
{
	return (uint32) nd_fmix64((uint64) id);
}

/* id -> index in the disjoint sets */
typedef struct IdEntry
{
	int64		id;
	uint32		index;
	char		status;
} IdEntry;

#define SH_PREFIX		idmap
#define SH_ELEMENT_TYPE	IdEntry
#define SH_KEY_TYPE		int64
#define SH_KEY			id
#define SH_HASH_KEY(tb, key)	id_hash(key)
#define SH_EQUAL(tb, a, b)		((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/*
 * Edges are buffered and joined this many at a time: the hash table's
 * buckets of a whole batch are prefetched first, so that their cache misses
 * overlap instead of coming one after the other (most ids are looked up
 * once or twice, in a table far larger than the caches).
 */
#define EDGE_BATCH		256

/* the estimate sizes the table up to this many ids (16 MB: a bad one costs little) */
#define PRESIZE_MAX_IDS	((uint32) 1 << 20)

/* What the reader fills in. */
typedef struct ClusterInput
{
	nd_unionfind *uf;
	idmap_hash *map;
	MemoryContext sets_ctx;		/* of uf and map, deleted when they spill */
	MemoryContext call_ctx;		/* the function's, where the spill lives */
	Size		budget;			/* bytes the disjoint sets may take */
	nd_edge_spill *spill;		/* once they have spilled: every edge goes here */
	bool		arrays;			/* one integer-array column, not two ids */
	Oid			type[2];		/* base types of the ids (of the elements) */
	int16		elem_len;
	bool		elem_byval;
	char		elem_align;
	int64		npairs;
	int			nbatch;
	int64		batch[EDGE_BATCH][2];
} ClusterInput;

/* The index of id, added as a singleton when first seen. */
static uint32
id_index(idmap_hash *map, nd_unionfind *uf, int64 id, uint32 hash)
{
	bool		found;
	IdEntry    *e = idmap_insert_hash(map, id, hash, &found);

	if (!found)
	{
		uint32		i = nd_uf_add(uf, id);

		if (i == ND_UF_INVALID)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many distinct ids in the pairs"),
					 errdetail("dedup_clusters() handles at most %u distinct ids.",
							   (unsigned) ND_UF_MAX_IDS)));
		e->index = i;
	}
	return e->index;
}

/* Bytes of the disjoint sets and their hash table as allocated now. */
static Size
sets_bytes(ClusterInput *in)
{
	return (Size) in->uf->cap * ND_UF_BYTES_PER_ID +
		(Size) in->map->size * sizeof(IdEntry);
}

/*
 * Whether joining the buffered edges could take the disjoint sets past
 * their budget: each of the batch's ids may be new, and an array that grows
 * is copied, old and new both allocated for a moment.
 */
static bool
sets_would_outgrow(ClusterInput *in)
{
	uint64		more = 2 * (uint64) in->nbatch;
	Size		uf_now = (Size) in->uf->cap * ND_UF_BYTES_PER_ID;
	Size		map_now = (Size) in->map->size * sizeof(IdEntry);
	Size		uf_next = uf_now,
				map_next = map_now,
				copying = 0;

	if (in->uf->n + more > in->uf->cap)
	{
		uf_next = (Size) Max(1024, 2 * (uint64) in->uf->cap) * ND_UF_BYTES_PER_ID;
		copying = uf_now;
	}
	if (in->map->members + more >= in->map->grow_threshold)
	{
		map_next = 2 * map_now;
		copying = Max(copying, map_now);
	}
	return uf_next + map_next + copying > in->budget;
}

/*
 * The disjoint sets are written out, each id with its set's smallest id,
 * and freed; the edges that follow are kept on the side.
 */
static void
spill_sets(ClusterInput *in)
{
	MemoryContext old = MemoryContextSwitchTo(in->call_ctx);
	nd_unionfind *uf = in->uf;

	ereport(DEBUG1,
			(errmsg_internal("dedup_clusters: the disjoint sets would pass work_mem times hash_mem_multiplier: writing them out")));
	ereport(DEBUG2,
			(errmsg_internal("dedup_clusters: %u distinct ids in %zu bytes, budget %zu",
							 uf->n, sets_bytes(in), in->budget)));
	in->spill = nd_edge_spill_begin();
	nd_progress_phase("writing the sets out", -1);
	for (uint32 i = 0; i < uf->n; i++)
		nd_edge_spill_add_set(in->spill, uf->id[i], nd_uf_label(uf, i));
	MemoryContextDelete(in->sets_ctx);
	in->sets_ctx = NULL;
	in->uf = NULL;
	in->map = NULL;
	MemoryContextSwitchTo(old);
}

/* Joins the buffered edges, in the order they came (ids numbered as seen). */
static void
flush_edges(ClusterInput *in)
{
	uint32		hash[EDGE_BATCH][2];

	/* what the sets hold now is counted in what they could grow to */
	if (in->spill == NULL && in->nbatch > 0 && sets_would_outgrow(in))
		spill_sets(in);
	if (in->spill != NULL)
	{
		for (int e = 0; e < in->nbatch; e++)
			nd_edge_spill_add(in->spill, in->batch[e][0], in->batch[e][1]);
		in->npairs += in->nbatch;
		in->nbatch = 0;
		return;
	}

	for (int e = 0; e < in->nbatch; e++)
		for (int s = 0; s < 2; s++)
		{
			hash[e][s] = id_hash(in->batch[e][s]);
			__builtin_prefetch(&in->map->data[hash[e][s] & in->map->sizemask]);
		}
	for (int e = 0; e < in->nbatch; e++)
	{
		uint32		ia = id_index(in->map, in->uf, in->batch[e][0], hash[e][0]);
		uint32		ib = id_index(in->map, in->uf, in->batch[e][1], hash[e][1]);

		nd_uf_union(in->uf, ia, ib);
	}
	in->npairs += in->nbatch;
	in->nbatch = 0;
}

static inline void
add_edge(ClusterInput *in, int64 a, int64 b)
{
	in->batch[in->nbatch][0] = a;
	in->batch[in->nbatch][1] = b;
	if (++in->nbatch == EDGE_BATCH)
		flush_edges(in);
}

static void
pairs_shape(TupleDesc desc, double est_rows, void *arg)
{
	ClusterInput *in = (ClusterInput *) arg;
	double		est_ids;

	if (desc->natts == 1)
	{
		/* one array of ids per row */
		Oid			coltype = getBaseType(TupleDescAttr(desc, 0)->atttypid);
		Oid			elem = get_element_type(coltype);

		if (OidIsValid(elem))
			elem = getBaseType(elem);
		if (!OidIsValid(elem) || !nd_is_int_type(elem))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("pairs query must return two integer columns or one integer array"),
					 errdetail("Its one column is of type %s.",
							   format_type_be(TupleDescAttr(desc, 0)->atttypid))));
		in->arrays = true;
		in->type[0] = elem;
		get_typlenbyvalalign(elem, &in->elem_len, &in->elem_byval, &in->elem_align);
		est_ids = 4 * est_rows;
	}
	else
	{
		if (desc->natts != 2)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("pairs query must return two integer columns or one integer array"),
					 errdetail("It returns %d columns.", desc->natts)));
		for (int c = 0; c < 2; c++)
		{
			/* a domain over an integer type is read as its base type */
			in->type[c] = getBaseType(TupleDescAttr(desc, c)->atttypid);
			if (!nd_is_int_type(in->type[c]))
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("pairs query must return two integer columns or one integer array"),
						 errdetail("Column %d is of type %s.", c + 1,
								   format_type_be(TupleDescAttr(desc, c)->atttypid))));
		}
		est_ids = 2 * est_rows;
	}
	/*
	 * About as many ids as the estimate says, so that the table seldom
	 * grows; simplehash grows only to a larger power of two (it asserts so).
	 */
	if (est_ids > 1024)
	{
		uint64		want = pg_nextpower2_64((uint64) Min(est_ids, (double) PRESIZE_MAX_IDS));

		/*
		 * ... and to at most a third of the sets' budget (a slot takes 16
		 * bytes, an id 24 in the sets): an estimate may be far off.
		 */
		while (want > 1024 && want * sizeof(IdEntry) > in->budget / 3)
			want /= 2;
		if (want > in->map->size)
			idmap_grow(in->map, want);
	}
}

static void
pairs_row(Datum *values, bool *nulls, void *arg)
{
	ClusterInput *in = (ClusterInput *) arg;
	int64		a,
				b;

	/* a pair with an unknown end, or of a row with itself: no edge */
	if (nulls[0] || nulls[1])
		return;
	a = nd_int_datum(values[0], in->type[0]);
	b = nd_int_datum(values[1], in->type[1]);
	if (a != b)
		add_edge(in, a, b);
}

/*
 * One array: its ids are one cluster, joined as a star around the first
 * non-NULL id.  NULL elements, and elements equal to the first, add no
 * edge (as a pair with a NULL end, or of an id with itself).
 */
static void
sets_row(Datum *values, bool *nulls, void *arg)
{
	ClusterInput *in = (ClusterInput *) arg;
	ArrayType  *arr;
	array_iter	it;
	int			n;
	bool		have_first = false;
	int64		first = 0;

	if (nulls[0])
		return;
	arr = DatumGetArrayTypeP(values[0]);
	n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	array_iter_setup(&it, (AnyArrayType *) arr);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		d = array_iter_next(&it, &isnull, i, in->elem_len,
										in->elem_byval, in->elem_align);
		int64		id;

		if (isnull)
			continue;
		id = nd_int_datum(d, in->type[0]);
		if (!have_first)
		{
			first = id;
			have_first = true;
		}
		else if (id != first)
			add_edge(in, first, id);
		if ((i & 0xFFFF) == 0xFFFF)
			CHECK_FOR_INTERRUPTS();
	}
	/* a copy if it was toasted: rows would otherwise pile up until the end */
	if ((Pointer) arr != DatumGetPointer(values[0]))
		pfree(arr);
}

static void
input_row(Datum *values, bool *nulls, void *arg)
{
	ClusterInput *in = (ClusterInput *) arg;

	if (in->arrays)
		sets_row(values, nulls, arg);
	else
		pairs_row(values, nulls, arg);
}

PG_FUNCTION_INFO_V1(nd_dedup_clusters);
Datum
nd_dedup_clusters(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *query;
	MemoryContext ctx;
	nd_unionfind uf;
	idmap_hash *map;
	ClusterInput in;

	/* 0.3 declares it CALLED ON NULL INPUT; 0.1 and 0.2 declared it STRICT */
	nd_require_arg(fcinfo, 0, "pairs_query");
	query = text_to_cstring(PG_GETARG_TEXT_PP(0));

	/* checks that the caller accepts a set; the output spills past work_mem */
	InitMaterializedSRF(fcinfo, 0);

	/* the sets, in a context of their own: freed at once at the end */
	ctx = AllocSetContextCreate(CurrentMemoryContext, "dedup_clusters",
								ALLOCSET_DEFAULT_SIZES);
	nd_uf_init(&uf, nd_context_realloc, ctx);
	map = idmap_create(ctx, 1024, NULL);

	in.uf = &uf;
	in.map = map;
	in.sets_ctx = ctx;
	in.call_ctx = CurrentMemoryContext;
	in.budget = get_hash_memory_limit();
	in.spill = NULL;
	in.arrays = false;
	in.npairs = 0;
	in.nbatch = 0;
	/* a job of its own, so that dedup_keep_one's phase shows again after it */
	nd_progress_begin("dedup_clusters");
	nd_query_for_each_row(query, "pairs query",
						  "Give a SELECT (or VALUES) returning two integer columns or one integer array.",
						  pairs_shape, input_row, &in);
	flush_edges(&in);

	if (in.spill != NULL)
	{
		nd_edge_spill_finish(in.spill, rsinfo->setResult, rsinfo->setDesc);
		nd_progress_end();
		return (Datum) 0;
	}

	ereport(DEBUG1,
			(errmsg_internal("dedup_clusters: %lld pairs, %u distinct ids, %zu bytes",
							 (long long) in.npairs, uf.n,
							 MemoryContextMemAllocated(ctx, true))));

	nd_progress_phase("writing clusters", uf.n);
	for (uint32 i = 0; i < uf.n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		if ((i & 0xFFFF) == 0)
		{
			CHECK_FOR_INTERRUPTS();
			nd_progress_done(i);
		}
		values[0] = Int64GetDatum(uf.id[i]);
		values[1] = Int64GetDatum(nd_uf_label(&uf, i));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	MemoryContextDelete(ctx);
	nd_progress_end();
	return (Datum) 0;
}
