# neardup — PGXS build.
#
# The two commands a user needs are `make demo` and `make test`; both install
# what is missing from Debian's packages first, so they work on a fresh
# machine where the server headers (and so PGXS itself) are not there yet.

EXTENSION   = neardup

MODULE_big  = neardup

# The folder of this Makefile, the source tree: the current directory, or
# the VPATH of a build in another (make -f SRC/Makefile VPATH=SRC).
ND_SRC     := $(patsubst %/,%,$(dir $(firstword $(MAKEFILE_LIST))))

# SQL-facing code, one file per concern.
# The folders follow the data path: the type, text -> features ->
# fingerprints, MinHash, index opclasses and the Hamming access method,
# planner support, dedup jobs, the block-sharded layout; shared/ holds the
# services several of them share.
OBJS        = \
	src/neardup.o \
	src/shared/extension_catalog.o \
	src/shared/progress.o \
	src/type/hamming.o \
	src/type/hamming_ball.o \
	src/type/simhash64_type.o \
	src/fingerprint/simhash_agg.o \
	src/fingerprint/simhash_arrays.o \
	src/fingerprint/simhash_radius.o \
	src/fingerprint/simhash_text.o \
	src/fingerprint/simhash_tsvector.o \
	src/fingerprint/text_features.o \
	src/minhash/minhash.o \
	src/minhash/minhash_bbit.o \
	src/minhash/minhash_jaccard.o \
	src/minhash/minhash_lsh.o \
	src/index/gin_permuted.o \
	src/index/gist_hamming.o \
	src/hamming/ham_build.o \
	src/hamming/ham_cache.o \
	src/hamming/ham_check.o \
	src/hamming/ham_compact.o \
	src/hamming/ham_cost.o \
	src/hamming/ham_flush.o \
	src/hamming/ham_handler.o \
	src/hamming/ham_insert.o \
	src/hamming/ham_list.o \
	src/hamming/ham_locks.o \
	src/hamming/ham_meta.o \
	src/hamming/ham_open.o \
	src/hamming/ham_page.o \
	src/hamming/ham_recycle.o \
	src/hamming/ham_run_reader.o \
	src/hamming/ham_run_writer.o \
	src/hamming/ham_scan.o \
	src/hamming/ham_stats.o \
	src/hamming/ham_vacuum.o \
	src/hamming/ham_validate.o \
	src/hamming/ham_wal.o \
	src/hamming/ham_worker.o \
	src/planner/band_support.o \
	src/planner/block_support.o \
	src/planner/radius_cost.o \
	src/planner/radius_index.o \
	src/planner/radius_rewrite.o \
	src/planner/radius_selectivity.o \
	src/planner/radius_support.o \
	src/dedup/allpairs_scan.o \
	src/dedup/band_keys.o \
	src/dedup/cluster_output.o \
	src/dedup/clusters.o \
	src/dedup/clusters_spill.o \
	src/dedup/minhash_clusters.o \
	src/dedup/pairs.o \
	src/dedup/query_rows.o \
	src/dedup/simhash_clusters.o \
	src/shard/layout_blocks.o \
	src/shard/layout_catalog.o \
	src/shard/layout_within.o \
	src/shard/pack.o \
	src/shard/pack_copy.o \
	$(CORE_OBJS)

# Server-free algorithmic cores: also built into the unit tests and fuzzers
# (test/run_all.sh compiles every src/core/*.c).
CORE_OBJS   = \
	src/core/nd_allpairs.o \
	src/core/nd_bitrange.o \
	src/core/nd_codeset.o \
	src/core/nd_features.o \
	src/core/nd_lsh_clusters.o \
	src/core/nd_lsm.o \
	src/core/nd_mih.o \
	src/core/nd_minhash.o \
	src/core/nd_permute.o \
	src/core/nd_simhash.o \
	src/core/nd_simhash_radius.o \
	src/core/nd_star_contraction.o \
	src/core/nd_unicode.o \
	src/core/nd_unionfind.o

# The released install script of 0.1 (never edited again) and the update
# scripts from it: a new install runs 0.1's script and then every update.
DATA        = sql/$(EXTENSION)--0.1.sql \
			  $(sort $(patsubst $(ND_SRC)/%,%,$(wildcard $(ND_SRC)/sql/$(EXTENSION)--*--*.sql)))
DOCS        =

# The pg_regress suites, test/sql/*.sql with their expected output in
# test/expected/, run in name order (numbered so that the type tests come
# first).  000_setup, which creates the helpers the others share, runs
# first in every run, also when REGRESS names suites on the command line.
REGRESS     = $(sort $(basename $(notdir $(wildcard $(ND_SRC)/test/sql/*.sql))))
override REGRESS := 000_setup $(filter-out 000_setup,$(REGRESS))
REGRESS_OPTS = --inputdir=$(srcdir)/test --load-extension=$(EXTENSION)

# The control file's default_version: the release tarball's name, and the
# version in the library's magic block (pg_get_loaded_modules(), 18 on).
EXTVERSION := $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(ND_SRC)/$(EXTENSION).control)

# xxHash is header-only when inlined: no run-time dependency on libxxhash.
# Project headers are included by their folder: "core/nd_mih.h".
PG_CPPFLAGS = -I$(srcdir)/src -DXXH_INLINE_ALL -DND_VERSION='"$(EXTVERSION)"'
PG_CFLAGS   = -O3
# make WERROR=1: every warning is an error (the tests build so on each
# major); a user's build only warns.
ifeq ($(WERROR),1)
PG_CFLAGS  += -Werror
endif

# The server to build for: make PG_CONFIG=/usr/lib/postgresql/18/bin/pg_config
# (any major from 15 to 18).  Unnamed, it is the pg_config on PATH, which on
# Debian is the newest major whose server headers are installed; when
# several are, the build says which one it took.
ifeq ($(origin PG_CONFIG),undefined)
ifneq ($(word 2,$(wildcard /usr/lib/postgresql/*/bin/pg_config)),)
$(info neardup: building for $(shell pg_config --version 2>/dev/null) (pg_config on PATH); several majors are installed, make PG_CONFIG=/usr/lib/postgresql/N/bin/pg_config picks one)
endif
endif
PG_CONFIG  ?= pg_config
PGXS       := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)

# How the hamming index WAL-logs its list appends and freed pages
# (doc/index-hamming.md, "WAL records"): HAM_WAL=fragments writes generic
# WAL records of just the changed bytes itself, in a format private to
# PostgreSQL's generic_xlog.c; HAM_WAL=api goes through generic WAL's public
# API (GenericXLogFinish), some 6x slower for COPY into an indexed table
# (test/bench/run_wal_format.sh).  Unset, it is fragments on the majors
# whose generic_xlog.c has been compared with ham_log_fragments
# (HAM_WAL_CHECKED: 15, 17 and 18 compared, 16 between two identical
# ones), api on any other.
HAM_WAL_CHECKED = 15 16 17 18
ifeq ($(HAM_WAL),)
HAM_WAL_MAJOR := $(shell $(PG_CONFIG) --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
override HAM_WAL := $(if $(filter $(HAM_WAL_MAJOR),$(HAM_WAL_CHECKED)),fragments,api)
endif
ifeq ($(HAM_WAL),api)
PG_CPPFLAGS += -DHAM_WAL_PUBLIC_API
else ifneq ($(HAM_WAL),fragments)
$(error HAM_WAL=$(HAM_WAL): the values are fragments and api)
endif

ifneq ($(wildcard $(PGXS)),)
include $(PGXS)
else
all:
	@echo "PostgreSQL server headers are missing: run 'make deps' (or 'make test' / 'make demo', which do)." >&2
	@exit 1
endif

# PGXS does not track header dependencies: rebuild everything when any
# header changes (struct layouts are shared between files).
$(OBJS): $(wildcard $(ND_SRC)/src/*.h $(ND_SRC)/src/*/*.h)

# Nor does it know which server the objects were compiled for: a stamp
# names the server (its version and a digest of its configure options),
# WERROR and HAM_WAL, rewritten only when they change, so that a build for
# another server, with -Werror where the last was without, or with the
# other WAL format, recompiles everything.
BUILD_STAMP = build/pg-built-for
BUILD_FOR  := $(VERSION) $(firstword $(shell $(PG_CONFIG) --configure | md5sum)) WERROR=$(WERROR) HAM_WAL=$(HAM_WAL)
$(OBJS): $(BUILD_STAMP)
# Its rule also makes the objects' folders, which a build outside the
# source tree (VPATH) does not have yet.
$(BUILD_STAMP): FORCE
	@mkdir -p $(dir $@) $(sort $(dir $(OBJS)))
	@echo '$(BUILD_FOR)' | cmp -s - $@ || echo '$(BUILD_FOR)' >$@
.PHONY: FORCE
FORCE:
EXTRA_CLEAN = $(BUILD_STAMP)

.PHONY: dist deps demo demo-shards test test-cassert unit fuzz bench bench-fingerprint bench-gin bench-gist bench-minhash bench-pairs bench-clusters bench-clusters-spill bench-clusters-update bench-minhash-clusters bench-scale-out bench-plan-choice bench-am bench-constraint bench-pending bench-threshold bench-scale bench-inserts bench-lsh-recall bench-wal-format bench-first-query bench-churn bench-blocks bench-block-ball bench-only-block bench-layout-bytes bench-layout-packed

# The release tarball (PGXN's upload, the source of a Debian orig tarball):
# the committed tree, git archive of HEAD, as neardup-VERSION.zip in DISTDIR
# (default: here), its files under neardup-VERSION/.  VERSION is the
# control file's default_version; test/e2e/version_consistency.sh checks
# that META.json, debian/changelog and the newest update script agree.
DISTDIR    ?= .
dist:
	git archive --format=zip --prefix=$(EXTENSION)-$(EXTVERSION)/ \
		-o $(DISTDIR)/$(EXTENSION)-$(EXTVERSION).zip HEAD
	@echo "$(DISTDIR)/$(EXTENSION)-$(EXTVERSION).zip"

# Debian packages the build and the tests need (installed only when missing).
deps:
	@bash test/lib/deps.sh

# Main job: throwaway cluster, real corpus, groups of near-duplicates.
demo:
	@bash test/demo/run_demo.sh

# The block layout over postgres_fdw (doc/scale-out.md): a coordinator and
# shard databases in one throwaway cluster, queries checked by brute force.
demo-shards:
	@bash test/demo/demo_shards.sh

# Every suite on PostgreSQL 15, and the pg_regress suites on each other
# major of PG_MAJORS whose server test/pg/server.sh can build from Debian's
# source (the first run builds each, some 12 minutes apiece; a major it
# cannot fetch is reported and skipped).  The last line reports the counts.
# `make test PG_MAJORS=18` runs one major only.
PG_MAJORS ?= 15 17 18 19
test:
	@ND_PG_MAJORS="$(PG_MAJORS)" bash test/run_all.sh

# The pg_regress suites against PostgreSQL 15 built with assertions
# (--enable-cassert), cached in /var/tmp/neardup-pg15-cassert: the first
# run compiles the server (some 12 minutes), so it is not part of `make test`.
test-cassert:
	@bash test/cassert/run.sh

unit:
	@bash test/run_all.sh unit

fuzz:
	@bash test/run_all.sh fuzz

# Benchmarks: ratios against baselines measured in the same run.  The index
# benchmarks take ROWS (default 1M) and more; see the scripts.
bench: bench-am bench-constraint bench-pending bench-threshold bench-fingerprint bench-gin bench-gist bench-minhash bench-pairs bench-clusters bench-clusters-spill bench-clusters-update bench-minhash-clusters bench-scale-out bench-plan-choice bench-scale bench-inserts bench-lsh-recall bench-wal-format bench-first-query bench-churn bench-blocks bench-block-ball bench-only-block bench-layout-bytes bench-layout-packed

bench-fingerprint:
	@bash test/bench/run_bench.sh

bench-gin:
	@bash test/bench/run_gin.sh

# The hamming access method against GIN, GiST and the seq scan: exact KNN
# and radius latency, builds, size (ROWS, NQ, NSLOW, PATHS; PGVECTOR_SRC
# adds pgvector built from that source tree for the side-by-side).
bench-am:
	@bash test/bench/run_am.sh

bench-constraint:
	@bash test/bench/run_constraint.sh

# What a hamming index's pending list costs radius and KNN scans between
# merges, at 10M rows (ROWS, PENDING, NQ).
# Inserts into a hamming index at scale: COPY and single-row INSERT against
# a primary-key-only table, WAL per row, the largest pending list, KNN
# while two writers insert (ROWS, INSERT_ROWS: see the script).
bench-inserts:
	@bash test/bench/run_inserts.sh

# The hamming index's list appends WAL-logged as fragments written by hand
# against generic WAL's public API (HAM_WAL, above), both builds in one
# run: COPY and single-row INSERT time and WAL per row, alternating rounds
# (ND_BENCH_ROWS, ND_BENCH_SINGLE, ND_BENCH_ROUNDS).
bench-wal-format:
	@bash test/bench/run_wal_format.sh

bench-pending:
	@bash test/bench/run_pending.sh

# A hamming index's size through rounds of deletes and inserts, and after a
# bulk delete and reload, against its fresh size (ROWS, ROUNDS, PCT, TX).
bench-churn:
	@bash test/bench/run_churn.sh

# The first query of a new connection against the same query warm, at 1M and
# 10M rows, with the pending list empty and holding entries (ROWS, LIST, NC).
bench-first-query:
	@bash test/bench/run_first_query.sh

# A layout copy's search on a shard: the block ball against the radius
# search with the block's filter, on one partition (test/bench/run_block_ball.sh).
bench-block-ball:
	@bash test/bench/run_block_ball.sh

# An index of one table against one of four, on the searches it is not
# for (test/bench/run_only_block.sh).
bench-only-block:
	@bash test/bench/run_only_block.sh

# A block layout's bytes per row and its deletes, its tables as
# simhash_shard_create makes them against a primary key on every copy
# (test/bench/run_layout_bytes.sh).
bench-layout-bytes:
	@bash test/bench/run_layout_bytes.sh

# Packed copies (simhash_shard_create(..., packed => true)) against the
# block layout as made: load, merge, bytes per row, radius and KNN queries
# and deletes through the coordinator, the two interleaved
# (test/bench/run_layout_packed.sh; ROWS, PARTS, NQ, ND).
bench-layout-packed:
	@bash test/bench/run_layout_packed.sh

# One hamming index at crawl scale: CREATE INDEX at default options on
# 200M rows (size per row, time against SMALL_BUILDS builds at SMALL rows,
# the two-level run directory), radius 3 and KNN 10 against a parallel seq
# scan with answers checked equal (ROWS, SMALL, SMALL_BUILDS, NQ, NSEQ,
# CHECK; some 36 GB of disk and 40 minutes at the default 200M).
bench-scale:
	@bash test/bench/run_scale.sh

# Hamming indexes of 3, 4 and 5 blocks on the same rows, queried in rotated
# rounds: build time, bytes per row, radius 3 and KNN 10 latency and
# buffers per query, answers against a seq scan (ROWS, BLOCKS, NQ, NSEQ,
# NBUF, BUILDS).
bench-blocks:
	@bash test/bench/run_blocks.sh

# "At least t similar": SimHash's recall by radius and the radius model on
# the demo corpus, then verified lookups at 1M rows on the hamming index,
# GIN and a seq scan, against MinHash on its band index (ROWS, NQ,
# THRESHOLD, RECALL).
bench-threshold:
	@bash test/bench/run_threshold.sh

bench-gist:
	@bash test/bench/run_gist.sh

# The planner's pick for radius search against each path forced (ROWS).
bench-plan-choice:
	@bash test/bench/run_plan_choice.sh

bench-minhash:
	@bash test/bench/run_minhash.sh

bench-pairs:
	@bash test/bench/run_pairs.sh

# simhash_clusters with huge identical groups against simhash_pairs on the
# random rows alone (ROWS, GROUP, NGROUPS, GSIZE, ROUNDS).
bench-clusters:
	@bash test/bench/run_clusters.sh

# dedup_clusters in memory and spilled past work_mem (PAIRS, NGROUPS, GIANT, WORK_MEMS).
bench-clusters-spill:
	@bash test/bench/run_clusters_spill.sh

# simhash_clusters_update against a full run (ROWS, NEW, GONE, GROUP).
bench-clusters-update:
	@bash test/bench/run_clusters_update.sh

bench-minhash-clusters:
	@bash test/bench/run_minhash_clusters.sh

# MinHash LSH: recall at the threshold and its cost, by choice of bands and rows
bench-lsh-recall:
	@bash test/bench/run_lsh_recall.sh

# Coordinator + 3 postgres_fdw shards against one node, same rows (ROWS, SHARDS);
# then the block-sharded layout against the id-hash layout and one node at
# 2, 4 and 8 shards, and its nightly clusters at 10M rows (issue 31).
bench-scale-out:
	@bash test/bench/run_scale_out.sh
	@bash test/bench/run_scale_out_blocks.sh
