#!/usr/bin/env bash
# The pg_regress suites against an assert-enabled PostgreSQL 15
# (`make test-cassert`; not part of `make test`).
#
# Debian's server is built without assertions, so an Assert() that the
# extension's code paths break inside the server (a lock taken where the
# core forbids it, a memory context misused, a buffer left pinned, ...)
# goes unnoticed there.  This script:
#   1. builds PostgreSQL 15 from Debian's source package with
#      --enable-cassert --enable-debug into a cache directory, once (later
#      runs reuse it); the system's PostgreSQL is not touched;
#   2. builds and installs neardup against that server, from a copy of this
#      tree (the tree's own objects, built for Debian's server, stay);
#   3. runs `make installcheck` in a throwaway cluster owned by the
#      unprivileged 'postgres' user, removed at the end whatever happens;
#   4. on failure prints regression.diffs, every TRAP: line of the server
#      log with its backtrace (resolved to file:line), and the gdb
#      backtrace of each core dump the crashes left.
# The last line is "N passed, N failed" over the suites, as test/run_all.sh
# prints; the exit code is non-zero if anything failed.
#
# Environment:
#   ND_CASSERT_CACHE  cache directory (default /var/tmp/neardup-pg15-cassert);
#                     the server goes to $ND_CASSERT_CACHE/pgsql, the logs of
#                     the last run to $ND_CASSERT_CACHE/last-run
#   ND_PG_OPTS        extra postgresql.conf settings, space-separated
#                     guc=value pairs (e.g. restart_after_crash=off)
#   REGRESS           a subset of the suites (e.g. REGRESS=230_index_hamming;
#                     through make, on its command line: `make test-cassert
#                     REGRESS=...`, as the Makefile's own REGRESS would
#                     replace one from the environment)
#   ND_CASSERT_PAGELOCK=1
#                     the server also has PostgreSQL 13's assertion that no
#                     heavyweight lock but a relation extension lock is taken
#                     while a page lock is held (test/cassert/page-lock-assert.diff,
#                     applied to lock.c; PostgreSQL 14 dropped the check).
#                     It is another server, in its own cache (default
#                     /var/tmp/neardup-pg15-pageassert), unpacked from the
#                     source package the plain cache already downloaded if
#                     it is there.
#
# The first run downloads the source (~23 MB) and compiles the server:
# some 12 minutes on 2 cores, before the suites' 3 to 7.  Later runs only
# rebuild the extension.
set -euo pipefail
shopt -s inherit_errexit

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PLAIN_CACHE=/var/tmp/neardup-pg15-cassert
PAGELOCK_PATCH=$ROOT/test/cassert/page-lock-assert.diff
if [ "${ND_CASSERT_PAGELOCK:-0}" = 1 ]; then
	CACHE=${ND_CASSERT_CACHE:-/var/tmp/neardup-pg15-pageassert}
else
	CACHE=${ND_CASSERT_CACHE:-$PLAIN_CACHE}
fi
# "pgsql" in the prefix matters: Debian's patch 50-per-version-dirs
# installs the server's libraries into /usr/lib/postgresql/15/lib (the
# system's!) unless the library directory names pgsql or postgres.
PREFIX=$CACHE/pgsql
PG_CONFIG=$PREFIX/bin/pg_config
# What the server is built with, recorded in the stamp: a change rebuilds.
# No ICU, no LLVM, no NLS: neardup uses none of them (xxHash is inlined,
# collations are libc's C/C.UTF-8).  From Debian's own flags only the
# system time zone data (as Debian's server has) and the frame pointers
# (readable backtraces) are kept.
CONFIGURE_ARGS=(--prefix="$PREFIX" --enable-cassert --enable-debug
	--with-system-tzdata=/usr/share/zoneinfo
	CFLAGS="-O2 -fno-omit-frame-pointer")

log() { echo "cassert: $*" >&2; }

REPORTED=0
WORK=
PGDATA_DIR=
cleanup() {
	local rc=$?
	if [ -n "$PGDATA_DIR" ] && [ -f "$PGDATA_DIR/postmaster.pid" ]; then
		runuser -u postgres -- "$PREFIX/bin/pg_ctl" -D "$PGDATA_DIR" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	[ -n "$WORK" ] && rm -rf "$WORK"
	# Stopped before the suites ran (a failed build, a server that did not
	# start): still one closing line for whoever reads only that.
	if [ "$REPORTED" -eq 0 ]; then
		log "stopped before the suites ran (exit code $rc)"
		echo "0 passed, 1 failed"
		[ "$rc" -ne 0 ] || rc=1
	fi
	exit "$rc"
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || { log "run as root (it installs packages and runs the server as 'postgres')"; exit 1; }

# ---- packages ---------------------------------------------------------------
# To build the server (dpkg-dev unpacks the source package; the tarball
# ships its generated parsers, but make runs bison and flex again should
# the unpacked timestamps say so), the extension, and to read crashes.
packages=(dpkg-dev gcc make bison flex libreadline-dev zlib1g-dev libxxhash-dev gdb binutils)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---- the server -------------------------------------------------------------
mkdir -p "$CACHE"
stamp=$CACHE/.built
want="configure ${CONFIGURE_ARGS[*]}"
if [ "${ND_CASSERT_PAGELOCK:-0}" = 1 ]; then
	want+=" + page-lock-assert.diff $(md5sum <"$PAGELOCK_PATCH" | cut -c1-12)"
fi

# Downloads and unpacks Debian's postgresql-15 source package into
# $CACHE/src and prints the unpacked directory.  apt's source lists and
# state are private to the cache: the machine's apt configuration has no
# deb-src lines and is left as it is.
fetch_source() {
	local apt=$CACHE/apt codename v dir
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial" "$CACHE/src"
	# The page-lock server: the plain cache's source package, if it has one.
	local reuse
	reuse=$(find "$PLAIN_CACHE/src" -maxdepth 1 -name 'postgresql-15_*.dsc' 2>/dev/null | head -1 || true)
	if [ "$CACHE" != "$PLAIN_CACHE" ] && [ -n "$reuse" ]; then
		rm -rf "$CACHE/src"/*
		log "unpacking $(basename "$reuse") from $PLAIN_CACHE/src"
		if (cd "$CACHE/src" && dpkg-source -x "$reuse" >&2); then
			dir=$(find "$CACHE/src" -mindepth 1 -maxdepth 1 -type d -name 'postgresql-15-*' | head -1)
			[ -n "$dir" ] && { echo "$dir"; return 0; }
		fi
		log "could not unpack it: downloading"
	fi
	cat >"$apt/sources.list.d/debian-src.sources" <<-EOF
		Types: deb-src
		URIs: http://deb.debian.org/debian
		Suites: $codename $codename-updates
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

		Types: deb-src
		URIs: http://deb.debian.org/debian-security
		Suites: $codename-security
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	local opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt/sources.list.d"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "APT::Sandbox::User=root")
	apt-get "${opts[@]}" -qq update >&2
	# The version of the installed server first, then the others newest
	# first: a mirror may lack one of them (the security archive's source
	# pool, on some), so take the first that downloads.
	local installed versions
	installed=$(dpkg-query -W -f='${Version}' postgresql-15 2>/dev/null || true)
	versions=$( { [ -n "$installed" ] && echo "$installed";
		apt-cache "${opts[@]}" showsrc postgresql-15 | sed -n 's/^Version: //p' | sort -r -V; } | awk '!seen[$0]++')
	for v in $versions; do
		rm -rf "$CACHE/src"/*
		log "fetching the source of postgresql-15 $v"
		if (cd "$CACHE/src" && apt-get "${opts[@]}" -qq source "postgresql-15=$v" >&2); then
			dir=$(find "$CACHE/src" -mindepth 1 -maxdepth 1 -type d -name 'postgresql-15-*' | head -1)
			[ -n "$dir" ] && { echo "$dir"; return 0; }
		fi
		log "postgresql-15 $v: not available from the mirror"
	done
	log "no source package of postgresql-15 could be downloaded"
	return 1
}

build_server() {
	local src pkglibdir
	src=$(fetch_source)
	if [ "${ND_CASSERT_PAGELOCK:-0}" = 1 ]; then
		log "applying $(basename "$PAGELOCK_PATCH")"
		patch -p1 -d "$src" <"$PAGELOCK_PATCH" >&2 || return 1
	fi
	log "building PostgreSQL $(basename "$src") with assertions into $PREFIX (about 12 minutes)"
	rm -rf "$PREFIX"
	(cd "$src" && ./configure "${CONFIGURE_ARGS[@]}" >"$CACHE/configure.log" 2>&1) \
		|| { tail -30 "$CACHE/configure.log" >&2; return 1; }
	# Where the libraries would go (see PREFIX above): never the system's.
	# shellcheck disable=SC2016 # $(pkglibdir) is make's
	pkglibdir=$(make -s --no-print-directory -C "$src" \
		--eval '_nd_pkglibdir: ; @echo $(pkglibdir)' _nd_pkglibdir)
	case "$pkglibdir" in
		"$PREFIX"/*) ;;
		*) log "the server would install its libraries into $pkglibdir, outside $PREFIX: stopping"; return 1 ;;
	esac
	# From `make test-cassert`, MAKELEVEL is 1: PostgreSQL's makefiles would
	# take this for a sub-make and skip the generated headers (utils/errcodes.h
	# missing); the server is built as a top-level make.
	(cd "$src" && unset MAKELEVEL MAKEFLAGS MFLAGS \
		&& make -j2 >"$CACHE/build.log" 2>&1 && make install >>"$CACHE/build.log" 2>&1) \
		|| { tail -40 "$CACHE/build.log" >&2; return 1; }
	echo "$want" >"$stamp"
}

# One build at a time (two runs started together share the cache).
exec 9>"$CACHE/.lock"
flock 9
if [ -x "$PG_CONFIG" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
	log "reusing $($PG_CONFIG --version) with assertions in $PREFIX"
else
	build_server
fi
grep -q -- '--enable-cassert' <("$PG_CONFIG" --configure) || { log "$PREFIX has no assertions"; exit 1; }
chmod -R a+rX "$PREFIX"

# ---- the extension ----------------------------------------------------------
# Built in a copy of the tree: PGXS would not notice that the tree's objects
# were compiled for another server.  The install goes into $PREFIX only.
WORK=$(mktemp -d /tmp/neardup-cassert.XXXXXX)
chmod 755 "$WORK"
mkdir "$WORK/ext"
tar -C "$ROOT" --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
	-cf - Makefile neardup.control src sql test/sql test/expected | tar -C "$WORK/ext" -xf -
log "building neardup against it"
if ! { make -C "$WORK/ext" -s -j2 PG_CONFIG="$PG_CONFIG" \
	&& make -C "$WORK/ext" -s PG_CONFIG="$PG_CONFIG" install; } >"$WORK/ext-build.log" 2>&1; then
	cat "$WORK/ext-build.log" >&2
	exit 1
fi

# ---- the cluster ------------------------------------------------------------
# Data directory, server log and socket in a directory of postgres' own.
mkdir "$WORK/pg"
chown postgres: "$WORK/pg"
PGDATA_DIR=$WORK/pg/data
SOCK=$WORK/pg
SERVER_LOG=$WORK/pg/server.log
# As test/lib/pgenv.sh does: UTF8 with the C.UTF-8 locale, messages in
# English, two parallel workers per Gather (the suites plan parallel
# queries).  restart_after_crash stays on, so that the suites after an
# assertion failure still run against the restarted server.
LANG=C.UTF-8 LC_ALL=C.UTF-8 runuser -u postgres -- "$PREFIX/bin/initdb" -D "$PGDATA_DIR" \
	--encoding=UTF8 --locale=C.UTF-8 --auth=trust >"$WORK/pg/initdb.log" 2>&1 \
	|| { cat "$WORK/pg/initdb.log" >&2; exit 1; }
# A port of our own, as pgenv.sh picks it (the socket is in $SOCK anyway).
# shellcheck source=../lib/ports.sh
. "$ROOT/test/lib/ports.sh"
port=$(nd_free_port)
pg_opts="-p $port -k $SOCK -c listen_addresses=127.0.0.1 -c lc_messages=C -c max_parallel_workers_per_gather=2"
for o in ${ND_PG_OPTS:-}; do
	pg_opts+=" -c $o"
done
# Core dumps of crashed backends (pg_ctl -c lifts the core size limit,
# which runuser's PAM session may have reset) land in the data directory
# when the kernel's core_pattern is a plain file name (Debian's default
# "core"); with another pattern only the server log's backtraces are there.
LANG=C.UTF-8 LC_ALL=C.UTF-8 runuser -u postgres -- "$PREFIX/bin/pg_ctl" -D "$PGDATA_DIR" \
	-l "$SERVER_LOG" -o "$pg_opts" -c -w start >/dev/null \
	|| { cat "$SERVER_LOG" >&2; exit 1; }

# ---- the suites -------------------------------------------------------------
log "running the pg_regress suites ($("$PREFIX/bin/postgres" --version), port $port)"
set +e
LANG=C.UTF-8 LC_ALL=C.UTF-8 PGHOST=$SOCK PGPORT=$port PGUSER=postgres \
	make -C "$WORK/ext" -s PG_CONFIG="$PG_CONFIG" ${REGRESS:+REGRESS="$REGRESS"} installcheck \
	>"$WORK/regress.log" 2>&1
set -e
cat "$WORK/regress.log"
runuser -u postgres -- "$PREFIX/bin/pg_ctl" -D "$PGDATA_DIR" -m fast -w stop >/dev/null 2>&1 || true

ok=$(grep -cE '\.\.\. ok' "$WORK/regress.log" || true)
notok=$(grep -cE '\.\.\. FAILED' "$WORK/regress.log" || true)
[ "$ok" -eq 0 ] && [ "$notok" -eq 0 ] && notok=1

# Backtrace lines of the server log ("binary(symbol+0xoff)[0xaddr]" or
# "binary(+0xoff)[0xaddr]", as glibc's backtrace_symbols prints them after
# a TRAP:) to functions and file:line, inlined calls included, through the
# symbol tables (nm) and addr2line.
declare -A NM_FILES=()
resolve_frame() {
	local line=$1 obj sym off base addr
	if ! [[ $line =~ ^(.*)\(([A-Za-z_][A-Za-z0-9_.]*)?\+(0x[0-9a-f]+)\)\ ?\[ ]]; then
		echo "    $line"
		return
	fi
	obj=${BASH_REMATCH[1]} sym=${BASH_REMATCH[2]} off=${BASH_REMATCH[3]}
	# The server's frames carry its process title, not its path.
	[[ $obj == *.so* ]] || obj=$PREFIX/bin/postgres
	base=0
	if [ -n "$sym" ]; then
		if [ -z "${NM_FILES[$obj]:-}" ]; then
			NM_FILES[$obj]=$WORK/nm.${#NM_FILES[@]}
			nm --defined-only "$obj" >"${NM_FILES[$obj]}" 2>/dev/null || true
		fi
		base=$(awk -v s="$sym" '$3 == s { print "0x" $1; exit }' "${NM_FILES[$obj]}")
		[ -n "$base" ] || { echo "    $line"; return; }
	fi
	# A return address: the call is the byte before it.
	addr=$(printf '0x%x' $((base + off - 1)))
	addr2line -f -i -p -e "$obj" "$addr" 2>/dev/null \
		| sed -e 's|^ (inlined by) |      inlined in |' -e 's|^|    |' \
			-e "s| at .*/postgresql-15-[^/]*/| at |" -e "s| at $WORK/ext/| at |" \
			-e "s|\$|  [$(basename "$obj")]|"
}

if [ "$notok" -ne 0 ] || grep -q '^TRAP:' "$SERVER_LOG"; then
	if [ -f "$WORK/ext/regression.diffs" ]; then
		echo "---- regression.diffs (first 400 lines)"
		head -400 "$WORK/ext/regression.diffs"
	fi
	echo "---- server log: assertion failures and crashes"
	grep -nE '^TRAP:|was terminated by signal|terminated by signal 6|PANIC:' "$SERVER_LOG" || echo "(none)"
	# Each TRAP: with the frames that follow it.
	awk '/^TRAP:/ { inbt = 1; print "----"; print; next }
		inbt && /\[0x[0-9a-f]+\]$/ { print; next }
		{ inbt = 0 }' "$SERVER_LOG" | while IFS= read -r l; do
		if [[ $l == TRAP:* || $l == ---- ]]; then echo "$l"; else resolve_frame "$l"; fi
	done
	# The statement each crashed process was running.
	grep -E 'was terminated by signal' -A1 "$SERVER_LOG" | grep -E 'DETAIL:  Failed process was running' | sort | uniq -c | head -20 || true
	for core in "$PGDATA_DIR"/core*; do
		[ -f "$core" ] || continue
		echo "---- gdb backtrace of $(basename "$core")"
		# (gdb prints frame #0 once on loading the core, then the backtrace)
		gdb -nx -batch -ex 'bt' "$PREFIX/bin/postgres" "$core" 2>/dev/null | grep -E '^#' | awk '!seen[$0]++' || true
	done
fi

# The logs stay with the cache for a closer look.
rm -rf "$CACHE/last-run"
mkdir -p "$CACHE/last-run"
cp "$SERVER_LOG" "$WORK/regress.log" "$CACHE/last-run/"
for f in regression.diffs regression.out; do
	[ -f "$WORK/ext/$f" ] && cp "$WORK/ext/$f" "$CACHE/last-run/"
done
[ -d "$WORK/ext/results" ] && cp -r "$WORK/ext/results" "$CACHE/last-run/"
chmod -R a+rX "$CACHE/last-run"
log "logs of this run: $CACHE/last-run"

REPORTED=1
echo "$ok passed, $notok failed"
[ "$notok" -eq 0 ]
