#!/usr/bin/env bash
# The hamming access method against GIN, GiST and the sequential scan
# (test/bench/am.sql) in a throwaway cluster: exact KNN and radius latency
# as ratios to a sequential scan of the same run, builds at
# maintenance_work_mem 64MB and 4GB, size per row.
#
#   ROWS=1000000 NQ=200 NSLOW=20 PATHS=hamming,gin,gist bash test/bench/run_am.sh
#
# GIANT: rows in the group of one identical code (default ROWS/5; 0: none).
#
# PGVECTOR_SRC=<a pgvector source tree> adds the peer a user would pick:
# pgvector's HNSW and IVFFlat on the same codes as bit(64), with their
# recall.  It is built from that tree into this run's staging directory
# only (a copy, nothing is installed or shipped):
#
#   git clone https://github.com/pgvector/pgvector /tmp/pgvector
#   PGVECTOR_SRC=/tmp/pgvector make bench-am
#
# shared_buffers is raised so that table and indexes stay in PostgreSQL's
# own cache (warm-cache latencies; ND_PG_OPTS overrides).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

paths=${PATHS:-hamming,gin,gist}
if [ -n "${PGVECTOR_SRC:-}" ]; then
	pgvector_build=$(mktemp -d /tmp/neardup-pgvector.XXXXXX)
	trap 'rm -rf "$pgvector_build"; nd_cleanup' EXIT
	cp -r "$PGVECTOR_SRC"/. "$pgvector_build"
	make -C "$pgvector_build" -s PG_CONFIG="$ND_PG_CONFIG" clean >/dev/null
	make -C "$pgvector_build" -s PG_CONFIG="$ND_PG_CONFIG" >/dev/null
	make -C "$pgvector_build" -s PG_CONFIG="$ND_PG_CONFIG" install DESTDIR="$ND_STAGE" >/dev/null
	chmod -R a+rX "$ND_STAGE"
	echo "pgvector $(git -C "$PGVECTOR_SRC" describe --tags 2>/dev/null || echo "(version unknown)") from $PGVECTOR_SRC"
	case ",$paths," in *,pgvector,*) ;; *) paths="$paths,pgvector" ;; esac
	# The parallel workers of its HNSW build load the library by its bare
	# name, which extension_destdir does not redirect.
	pgvector_libdir="dynamic_library_path=\$libdir:$ND_STAGE$("$ND_PG_CONFIG" --pkglibdir)"
fi

export ND_PG_OPTS="${ND_PG_OPTS:-"shared_buffers=4GB"} ${pgvector_libdir:-}"

nd_in_cluster psql -X -q -v ON_ERROR_STOP=1 \
	-v rows="${ROWS:-1000000}" -v nq="${NQ:-200}" -v nslow="${NSLOW:-20}" -v paths="$paths" \
	${GIANT:+-v giant="$GIANT"} \
	-f "$ROOT/test/bench/am.sql" 2>&1 | grep -v '^Dropping cluster'
