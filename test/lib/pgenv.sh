#!/usr/bin/env bash
# Helpers shared by the demo, the test runner and the benchmarks:
# build the extension, stage it outside the system directories, and run a
# command inside a throwaway PostgreSQL 15 cluster that loads it from there.
#
# Source this file; it defines:
#   nd_build                 compile (quietly) in the source tree
#   nd_stage                 install into a private staging dir, sets ND_STAGE
#   nd_in_cluster CMD ARGS…  run CMD with PGHOST/PGPORT/PGUSER/… pointing at a
#                            new cluster (owned by the unprivileged 'postgres'
#                            user) that is dropped afterwards, whatever happens
#
# ND_PG_MAJOR (default 15) picks the server: 15 is the system's (Debian's
# packages, clusters through pg_virtualenv); any other major is a server
# built from source by test/pg/server.sh (cached; the first use builds it,
# as root), whose clusters are made with its own initdb and pg_ctl.
# ND_WERROR=1 builds with every warning an error (the test runner sets it).

ND_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ND_PG_MAJOR=${ND_PG_MAJOR:-15}
ND_PG_PREFIX=
if [ "$ND_PG_MAJOR" = 15 ]; then
	ND_PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
elif ND_PG_PREFIX=$(bash "$ND_ROOT/test/pg/server.sh" "$ND_PG_MAJOR" | tail -1) &&
	[ -x "$ND_PG_PREFIX/bin/pg_config" ]; then
	ND_PG_CONFIG=$ND_PG_PREFIX/bin/pg_config
else
	echo "pgenv.sh: no PostgreSQL $ND_PG_MAJOR server (test/pg/server.sh $ND_PG_MAJOR failed)" >&2
	ND_PG_CONFIG=/nonexistent/pg$ND_PG_MAJOR/bin/pg_config
fi
export ND_PG_MAJOR
# shellcheck source=ports.sh
. "$ND_ROOT/test/lib/ports.sh"

# The test runner builds and stages once and exports ND_PREPARED=1: its
# jobs run side by side, and a second `make install` into the staging
# directory could rewrite neardup.so while another job's server loads it.
# (The Makefile recompiles when the server or WERROR differs from the last
# build's.)
nd_build() {
	[ "${ND_PREPARED:-}" = 1 ] && return 0
	bash "$ND_ROOT/test/lib/deps.sh"
	nd_make -s PG_CONFIG="$ND_PG_CONFIG" WERROR="${ND_WERROR:-}" >/dev/null
}

# nd_make ARGS...: make in the source tree, one at a time.  Two builds for
# different majors at once in one tree would link objects of both into one
# library (the build stamp names only the last), which loads and then
# misreads the planner's structures.
nd_make() {
	mkdir -p "$ND_ROOT/build"
	flock "$ND_ROOT/build/.make.lock" make -C "$ND_ROOT" "$@"
}

# Removes the staging directory if this shell created it (a script run from
# the test runner shares the runner's).  Scripts with an EXIT trap of their
# own call it from there.
nd_cleanup() {
	if [ -n "${ND_STAGE:-}" ] && [ "${ND_STAGE_OWNER:-}" = "$$" ]; then
		rm -rf "$ND_STAGE"
	fi
}

nd_stage() {
	if [ -z "${ND_STAGE:-}" ]; then
		# postgres must be able to read it: not under root's home.
		ND_STAGE=$(mktemp -d /tmp/neardup-stage.XXXXXX)
		chmod 755 "$ND_STAGE"
		ND_STAGE_OWNER=$$
		export ND_STAGE
		trap nd_cleanup EXIT
	fi
	[ "${ND_PREPARED:-}" = 1 ] && return 0
	if [ -n "$ND_PG_PREFIX" ]; then
		# A source-built server has no extension_destdir (a Debian patch):
		# a private copy of its installation (some 40 MB; relocatable, as
		# PostgreSQL finds its directories from its binaries' place) with
		# neardup installed into it, as a user would install it.
		rm -rf "$ND_STAGE/pg"
		cp -a "$ND_PG_PREFIX" "$ND_STAGE/pg"
		nd_make -s PG_CONFIG="$ND_STAGE/pg/bin/pg_config" WERROR="${ND_WERROR:-}" install >/dev/null
	else
		nd_make -s PG_CONFIG="$ND_PG_CONFIG" WERROR="${ND_WERROR:-}" install DESTDIR="$ND_STAGE" >/dev/null
	fi
	chmod -R a+rX "$ND_STAGE"
}

# nd_check_disk NEED_KB WHAT: the big benchmarks' check that the cluster's
# filesystem (${TMPDIR:-/tmp}: pg_virtualenv -t) has NEED_KB free; prints
# what it found, sets ND_DISK_AVAIL_KB, and fails naming WHAT (the size
# asked for) when it has not.
nd_check_disk() {
	local need_kb=$1 what=$2 tmp=${TMPDIR:-/tmp}
	ND_DISK_AVAIL_KB=$(df -Pk "$tmp" | awk 'NR == 2 { print $4 }')
	echo "# cluster in $tmp: $((ND_DISK_AVAIL_KB / 1024 / 1024)) GB free, about $((need_kb / 1024 / 1024)) GB needed"
	if [ "$ND_DISK_AVAIL_KB" -lt "$need_kb" ]; then
		echo "not enough disk in $tmp for $what (set TMPDIR to a larger filesystem)" >&2
		return 1
	fi
}

# Extra postgresql.conf settings may be given in ND_PG_OPTS (space-separated
# guc=value pairs).
nd_in_cluster() {
	if [ -n "$ND_PG_PREFIX" ]; then
		nd_in_source_cluster "$@"
		return
	fi
	local opts=(-o "extension_destdir=$ND_STAGE" -o "lc_messages=C" -o "max_parallel_workers_per_gather=2")
	local o
	for o in ${ND_PG_OPTS:-}; do
		opts+=(-o "$o")
	done
	# A port of our own: pg_createcluster's "next free port" races when
	# several throwaway clusters start at once (parallel test runs).
	local port
	port=$(nd_free_port)
	# -t: cluster in a temporary directory even as root; LANG=C keeps
	# server messages and collation stable for pg_regress.
	# Every pg_virtualenv cluster is called 15/regress, and would share
	# /var/run/postgresql/15-regress.pid, which pg_ctlcluster consults:
	# one of its own, named after the port.
	opts+=(-o "external_pid_file=/tmp/nd-cluster-$port.pid")
	LANG=C.UTF-8 LC_ALL=C.UTF-8 pg_virtualenv -t -v 15 -c "-p $port" \
		-i "--encoding=UTF8 --locale=C.UTF-8" "${opts[@]}" "$@"
}

# nd_in_cluster for a source-built server (ND_PG_MAJOR other than 15): a
# cluster of the staged copy's initdb in a temporary directory, owned by
# 'postgres', listening on a socket in that directory only (trust: nobody
# else can reach it) and on the port nd_free_port gives, stopped and
# removed when CMD ends, fails or the shell is interrupted.
nd_in_source_cluster() {
	local bin=$ND_STAGE/pg/bin port dir as=() rc
	port=$(nd_free_port)
	dir=$(mktemp -d /tmp/nd-pg"$ND_PG_MAJOR".XXXXXX)
	[ "$(id -u)" -eq 0 ] && { chown postgres: "$dir"; as=(runuser -u postgres --); }
	(
		# The trap names the values, not this function's locals: an exit
		# through errexit (a caller's set -e) runs it outside the function.
		# pg_ctl of the cached server, not of the staged copy, which its
		# owner may remove first.
		trap "$(printf '%q ' nd_stop_source_cluster "$ND_PG_PREFIX/bin" "$dir" "${as[@]}")" EXIT
		trap 'exit 130' INT TERM
		export LANG=C.UTF-8 LC_ALL=C.UTF-8
		"${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres -A trust --encoding=UTF8 \
			--locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; exit 1; }
		{
			echo "port = $port"
			echo "listen_addresses = ''"
			echo "unix_socket_directories = '$dir'"
			echo "lc_messages = 'C'"
			echo "max_parallel_workers_per_gather = 2"
			echo "fsync = off"
			for o in ${ND_PG_OPTS:-}; do echo "${o%%=*} = '${o#*=}'"; done
		} >>"$dir/data/postgresql.conf"
		"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 120 start >/dev/null ||
			{ cat "$dir/server.log"; exit 1; }
		export PGHOST=$dir PGPORT=$port PGUSER=postgres PGDATABASE=postgres PG_CONFIG=$bin/pg_config \
			ND_PG_BIN=$bin
		unset PGHOSTADDR PGSERVICE PGPASSWORD
		rc=0
		"$@" || rc=$?
		[ $rc -eq 0 ] || tail -30 "$dir/server.log"
		exit $rc
	)
}

# nd_stop_source_cluster BIN DIR [RUNUSER…]: stops the server of DIR/data
# (immediate: the cluster is thrown away) and removes DIR.
nd_stop_source_cluster() {
	local bin=$1 dir=$2 pid
	shift 2
	if [ -f "$dir/data/postmaster.pid" ] &&
		! "$@" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1; then
		pid=$(head -1 "$dir/data/postmaster.pid" 2>/dev/null || true)
		[ -n "$pid" ] && kill -QUIT "$pid" 2>/dev/null
	fi
	rm -rf "$dir"
}

# Writes the demo corpus list (test/demo/corpus_list.sh, "name<TAB>path"
# lines) to a file the server can read, exports its path as ND_CORPUS, and
# removes it (and this shell's staging directory) on exit.
nd_corpus_list() {
	ND_CORPUS=$(mktemp /tmp/neardup-corpus.XXXXXX)
	trap 'rm -f "$ND_CORPUS"; nd_cleanup' EXIT
	bash "$ND_ROOT/test/demo/corpus_list.sh" >"$ND_CORPUS"
	chmod 644 "$ND_CORPUS"
	export ND_CORPUS
}

# Runs a psql script on the demo corpus in a throwaway cluster, building
# and staging first.  The script gets :corpus (nd_corpus_list's file);
# further arguments go to psql.  An error in the script (psql's exit status
# 3) fails with psql's own message, ERROR and HINT, and its status; only
# when the server went away (status 2) does pg_virtualenv add the server
# log, which is then what explains it.
nd_corpus_psql() {
	local script=$1 status rc
	shift
	nd_build
	nd_stage
	nd_corpus_list
	status=$(mktemp /tmp/neardup-status.XXXXXX)
	chmod 666 "$status"
	# shellcheck disable=SC2016 # expanded by the inner shell
	ND_STATUS=$status nd_in_cluster bash -c \
		'psql "$@"; rc=$?; echo "$rc" >"$ND_STATUS"; [ "$rc" -eq 3 ] || exit "$rc"' \
		psql -X -q -v ON_ERROR_STOP=1 -v corpus="$ND_CORPUS" "$@" \
		-f "$script" 2>&1 | grep -v '^Dropping cluster' || true
	rc=$(cat "$status")
	rm -f "$status"
	return "${rc:-1}"
}
