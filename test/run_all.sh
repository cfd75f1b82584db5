#!/usr/bin/env bash
# neardup test runner: `make test` (and CI's .ci/run) call this.
#
# Suites, in order (name them as arguments to run a subset, or name jobs:
# e2e:pg_cron, fuzz:fuzz_lsm):
#   unit     C unit tests of the server-free cores (ASan + UBSan)
#   fuzz     libFuzzer harnesses, each for a bounded time (FUZZ_SECONDS)
#   regress  pg_regress suites (test/sql/, test/expected/) in a throwaway cluster
#   e2e      scripted end-to-end tests (test/e2e/*.sh) in throwaway clusters
#   tap      TAP tests with PostgreSQL's own framework (test/tap/t/*.pl): crash
#            recovery, standbys, concurrency, shards; every major runs them
#
# ND_PG_MAJOR=18 runs them against that major's server (test/lib/pgenv.sh);
# ND_PG_MAJORS="15 18" runs one after another (below).
#
# The suites' jobs (the unit tests, each fuzzer, the regress run, each e2e
# script) run ND_TEST_JOBS at a time (default 2, one per core of the CI
# machine), the slowest first; every job has its own cluster, port and
# logs.  Jobs that mostly wait rather than compute (WAITING below) run in
# ND_TEST_WAIT_JOBS more lanes (default 1) beside those, so that their
# waits do not hold a core's lane.
#
# Every job reports how many of its checks passed and failed, the seconds
# it took and the CPU seconds it used (its processes and its servers'), the
# measure by which a job belongs in WAITING; the last line is "N passed, N
# failed" over all of them, and the exit code is non-zero if anything
# failed.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# The extension is built with warnings as errors (make WERROR=1).
export ND_WERROR=1
# shellcheck source=lib/pgenv.sh
. test/lib/pgenv.sh

JOBS=${ND_TEST_JOBS:-2}
WAIT_JOBS=${ND_TEST_WAIT_JOBS:-1}
BUILD=$ROOT/build
RESULTS=$BUILD/results

# The slowest jobs, started first so that the lanes end together.
SLOW_FIRST=(regress e2e:index_maintenance unit tap:010_index_crash e2e:index_small_buffers e2e:package
	e2e:index_concurrency tap:020_scale_out tap:030_pg_upgrade e2e:large_text)
# Jobs that mostly wait, the slowest first: their CPU seconds (in the
# runner's report) are a third to a half of their seconds or less on a
# machine they share with the two busy lanes.  pg_cron.sh waits for the
# scheduler's minute; the others wait for a standby or a subscriber to
# replay, a server to restart or recover, sessions to block.  Measured on
# the 2-core machine (seconds, CPU seconds): 013_logical_replication 271,
# 85; 011_index_standby 127, 52; pg_cron 101, 26; upgrade_index 97, 53;
# index_lsm 59, 22; 012_constraint 46, 14.  (010_index_crash, 208 s and
# 75 CPU seconds, starts early among the busy jobs.)
WAITING=(tap:013_logical_replication tap:011_index_standby e2e:pg_cron e2e:upgrade_index tap:021_shard_blocks tap:022_shard_move e2e:index_lsm tap:012_constraint)
# Jobs that must run alone, after the others (none: package.sh installs
# into the system's directories, but the other jobs' servers load the
# staged build, which extension_destdir puts first, and it checks that).
SOLO=()

# Counts TAP lines of a log: "ok" and "not ok" (PostgreSQL's TAP framework
# puts "[time](elapsed) " before them).
tap_counts() {
	local ok notok stamp='^(\[[0-9:.]+\]\([0-9.]+s\) )?'
	ok=$(grep -cE "${stamp}ok [0-9]+" "$1" || true)
	notok=$(grep -cE "${stamp}not ok [0-9]+" "$1" || true)
	echo "$ok $notok"
}

# result JOB PASSED FAILED: what a job leaves for the runner
result() {
	echo "$2 $3" >"$RESULTS/$1"
}

# --- the jobs: each runs in a subshell, writes its log and its result ---------

job_unit() {
	local cc=${CC:-gcc} t name bin log rc ok notok passed=0 failed=0
	local flags=(-std=gnu99 -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined
		-fno-sanitize-recover=all -DXXH_INLINE_ALL -Isrc/core)
	local objs=$BUILD/unit-core
	# The cores once, then each test linked against them.
	rm -rf "$objs"
	mkdir -p "$objs"
	for c in src/core/*.c; do
		if ! $cc "${flags[@]}" -c "$c" -o "$objs/$(basename "$c" .c).o" >"$BUILD/unit.log" 2>&1; then
			cat "$BUILD/unit.log"
			result unit 0 1
			return
		fi
	done
	for t in test/unit/test_*.c; do
		[ -e "$t" ] || continue
		name=$(basename "$t" .c)
		bin=$BUILD/$name
		log=$BUILD/$name.log
		if ! $cc "${flags[@]}" "$objs"/*.o "$t" -o "$bin" -lm >"$log" 2>&1; then
			echo "== unit $name: build failed"
			cat "$log"
			failed=$((failed + 1))
			continue
		fi
		"$bin" >"$log" 2>&1
		rc=$?
		read -r ok notok < <(tap_counts "$log")
		if [ $rc -ne 0 ] && [ "$notok" -eq 0 ]; then notok=1; fi
		if [ "$notok" -ne 0 ]; then
			echo "== unit $name: $notok failed"
			grep -vE '^ok ' "$log" | head -50
		fi
		echo "== unit $name: $ok passed, $notok failed"
		passed=$((passed + ok))
		failed=$((failed + notok))
	done
	result unit "$passed" "$failed"
}

job_fuzz() {
	local f=test/fuzz/$1.c secs=${FUZZ_SECONDS:-30}
	local bin=$BUILD/$1 log=$BUILD/$1.log
	if ! command -v clang >/dev/null; then
		echo "clang missing"
		result "fuzz:$1" 0 1
		return
	fi
	# The cores once for every fuzzer (the first job compiles them, the
	# others wait on the lock), instrumented for coverage without
	# libFuzzer's main; each harness is linked against them.
	if ! (
		flock 9
		[ -f "$BUILD/fuzz-core/done" ] && exit 0
		rm -rf "$BUILD/fuzz-core" && mkdir -p "$BUILD/fuzz-core" || exit 1
		for c in src/core/*.c; do
			clang -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
				-DXXH_INLINE_ALL -Isrc/core -c "$c" -o "$BUILD/fuzz-core/$(basename "$c" .c).o" || exit 1
		done
		touch "$BUILD/fuzz-core/done"
	) 9>"$BUILD/fuzz-core.lock" >"$log" 2>&1 ||
		! clang -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
			-DXXH_INLINE_ALL -Isrc/core "$BUILD"/fuzz-core/*.o "$f" -o "$bin" >>"$log" 2>&1; then
		cat "$log"
		result "fuzz:$1" 0 1
		return
	fi
	mkdir -p "$BUILD/corpus-$1"
	# Seed corpus: the repository's own test texts.
	if "$bin" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 "$BUILD/corpus-$1" test/fuzz/seeds >"$log" 2>&1; then
		echo "$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs"
		result "fuzz:$1" 1 0
	else
		tail -60 "$log"
		result "fuzz:$1" 0 1
	fi
}

job_regress() {
	local log=$BUILD/regress.log ok notok
	# pg_regress writes results/ and regression.diffs in the tree: one run at
	# a time (a single job).
	rm -rf results regression.diffs regression.out
	nd_in_cluster make -s PG_CONFIG="$ND_PG_CONFIG" installcheck >"$log" 2>&1
	ok=$(grep -cE '(^ok [0-9]+|\.\.\. ok)' "$log" || true)
	notok=$(grep -cE '(^not ok [0-9]+|\.\.\. FAILED)' "$log" || true)
	if [ "$ok" -eq 0 ] && [ "$notok" -eq 0 ]; then notok=1; fi
	if [ "$notok" -ne 0 ]; then
		cat "$log"
		[ -f regression.diffs ] && head -200 regression.diffs
	fi
	result regress "$ok" "$notok"
}

job_e2e() {
	local t=test/e2e/$1.sh log=$BUILD/e2e-$1.log rc ok notok
	bash "$t" >"$log" 2>&1
	rc=$?
	read -r ok notok < <(tap_counts "$log")
	if [ $rc -ne 0 ] && [ "$notok" -eq 0 ]; then notok=1; fi
	[ "$notok" -ne 0 ] && tail -60 "$log"
	result "e2e:$1" "$ok" "$notok"
}

job_tap() {
	local log=$BUILD/tap-$1.log rc ok notok
	bash test/tap/run.sh "test/tap/t/$1.pl" >"$log" 2>&1
	rc=$?
	read -r ok notok < <(tap_counts "$log")
	if [ $rc -ne 0 ] && [ "$notok" -eq 0 ]; then notok=1; fi
	[ "$notok" -ne 0 ] && tail -100 "$log"
	# a test that does not apply here says why (plan skip_all)
	grep -o 'skipped: .*' "$log" | head -1
	result "tap:$1" "$ok" "$notok"
}

# run_job JOB: the job's output goes to its own file, shown when it ends
run_job() {
	local job=$1
	case "$job" in
		unit) job_unit ;;
		fuzz:*) job_fuzz "${job#fuzz:}" ;;
		regress) job_regress ;;
		e2e:*) job_e2e "${job#e2e:}" ;;
		tap:*) job_tap "${job#tap:}" ;;
	esac >"$RESULTS/$job.out" 2>&1
}

# --job JOB: one job, what the runner runs in each lane (under
# cpu_seconds.py, which counts the CPU of its orphaned servers too).
if [ "${1:-}" = --job ]; then
	run_job "$2"
	exit 0
fi

# ND_PG_MAJORS="15 18": one run per major, in turn, each with its own
# server: the suites named (all by default) on 15, the system's server;
# on the others, servers built from Debian's source by test/pg/server.sh
# (cached; the first run builds each, as root), the pg_regress suites and
# the TAP tests (the end-to-end scripts assume Debian's cluster tools).
# A major whose source cannot be had (none in the archive, none fetched)
# is reported and skipped; one whose source does not build is a failure.
# The last
# line sums the runs.  ND_PG_MAJOR=18 alone runs on that major only.
if [ -n "${ND_PG_MAJORS:-}" ]; then
	total_passed=0
	total_failed=0
	ran=()
	skipped=()
	for major in $ND_PG_MAJORS; do
		args=("$@")
		if [ "$major" != 15 ]; then
			args=()
			for a in "${@:-regress tap}"; do
				for b in $a; do
					case "$b" in regress | tap | tap:*) args+=("$b") ;; esac
				done
			done
			[ ${#args[@]} -ne 0 ] || continue
			rc=0
			bash test/pg/server.sh "$major" >/dev/null || rc=$?
			if [ $rc -eq 1 ]; then
				# its source was there and did not build: a failure, not a skip
				echo "== PostgreSQL $major: its server did not build (test/pg/server.sh $major): failed"
				total_failed=$((total_failed + 1))
				ran+=("$major: the server did not build")
				continue
			elif [ $rc -ne 0 ]; then
				echo "== PostgreSQL $major: no server (test/pg/server.sh $major: no source, or not root): skipped"
				skipped+=("$major")
				continue
			fi
		fi
		echo "== PostgreSQL $major: ${args[*]:-every suite}"
		mkdir -p build
		ND_PG_MAJORS="" ND_PG_MAJOR=$major bash "$ROOT/test/run_all.sh" "${args[@]}" | tee "build/major-$major.log"
		read -r p _ f _ < <(tail -1 "build/major-$major.log")
		[[ "$p" =~ ^[0-9]+$ && "$f" =~ ^[0-9]+$ ]] || { p=0; f=1; }
		total_passed=$((total_passed + p))
		total_failed=$((total_failed + f))
		ran+=("$major: $p passed, $f failed")
	done
	printf '== %s\n' "${ran[@]}"
	[ ${#skipped[@]} -ne 0 ] && echo "== skipped (no server): ${skipped[*]}"
	echo "$total_passed passed, $total_failed failed in ${SECONDS}s"
	[ "$total_failed" -eq 0 ]
	exit
fi

suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(unit fuzz regress e2e tap)
for s in "${suites[@]}"; do
	case "$s" in
		unit | fuzz | regress | e2e | tap) ;;
		fuzz:*) [ -e "test/fuzz/${s#*:}.c" ] || { echo "unknown job: $s" >&2; exit 2; } ;;
		e2e:*) [ -e "test/e2e/${s#*:}.sh" ] || { echo "unknown job: $s" >&2; exit 2; } ;;
		tap:*) [ -e "test/tap/t/${s#*:}.pl" ] || { echo "unknown job: $s" >&2; exit 2; } ;;
		*) echo "unknown suite: $s" >&2; exit 2 ;;
	esac
done

mkdir -p "$BUILD"
rm -rf "$RESULTS" "$BUILD/fuzz-core"
mkdir -p "$RESULTS"

# --- the job list ---------------------------------------------------------------

# Every suite needs the packages (the unit tests and fuzzers include
# xxhash.h too): install what is missing before the first one runs.
bash test/lib/deps.sh || { echo "neardup: could not install the build dependencies" >&2; exit 1; }

all=()
for s in "${suites[@]}"; do
	case "$s" in
		unit) all+=(unit) ;;
		fuzz) for f in test/fuzz/fuzz_*.c; do [ -e "$f" ] && all+=("fuzz:$(basename "$f" .c)"); done ;;
		regress) all+=(regress) ;;
		e2e) for t in test/e2e/*.sh; do [ -e "$t" ] && all+=("e2e:$(basename "$t" .sh)"); done ;;
		tap) for t in test/tap/t/*.pl; do [ -e "$t" ] && all+=("tap:$(basename "$t" .pl)"); done ;;
		*) all+=("$s") ;;
	esac
done

in_list() {
	local x=$1
	shift
	for y in "$@"; do [ "$x" = "$y" ] && return 0; done
	return 1
}

# busy: the jobs that keep a core busy, slowest first; waiting: the
# others; solo: after both.
busy=()
waiting=()
solo=()
for j in "${WAITING[@]}"; do in_list "$j" "${all[@]}" && waiting+=("$j"); done
for j in "${SLOW_FIRST[@]}"; do in_list "$j" "${all[@]}" && busy+=("$j"); done
for j in "${all[@]}"; do
	if in_list "$j" "${SOLO[@]}"; then
		solo+=("$j")
	elif ! in_list "$j" "${SLOW_FIRST[@]}" "${WAITING[@]}"; then
		busy+=("$j")
	fi
done

# The extension is built and staged once, for every job.
if in_list regress "${all[@]}" || [ -n "$(printf '%s\n' "${all[@]}" | grep -E '^(e2e|tap):')" ]; then
	if ! MAKEFLAGS="-j$JOBS" nd_build >"$BUILD/build.log" 2>&1; then
		cat "$BUILD/build.log"
		echo "== build failed"
		echo "0 passed, 1 failed in ${SECONDS}s"
		exit 1
	fi
	nd_stage
	export ND_PREPARED=1
fi

# Ctrl-C or a TERM (a CI timeout) stops the jobs and every server they
# started.  A server daemonizes, but each job runs under cpu_seconds.py,
# which makes itself the reaper of the job's orphans: a job's servers stay
# its descendants.  Each postmaster among them gets an immediate shutdown
# (SIGQUIT), then the job's processes a TERM.
# job_processes PID...: the descendants of the PIDs, from one snapshot of
# the process table, as "PID postmaster" for a postmaster (a postgres whose
# parent is not postgres) and "PID" for anything else
job_processes() {
	ps -eo pid=,ppid=,comm= | awk -v roots="$*" '
		BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) mine[r[i]] = 1 }
		{ parent[$1] = $2; comm[$1] = $3; order[NR] = $1 }
		END {
			do {
				grew = 0
				for (i = 1; i <= NR; i++) {
					p = order[i]
					if (!(p in mine) && (parent[p] in mine)) { mine[p] = 1; grew = 1 }
				}
			} while (grew)
			for (p in mine)
				print p, (comm[p] == "postgres" && comm[parent[p]] != "postgres") ? "postmaster" : ""
		}'
}
on_interrupt() {
	local pid kind n=0 procs=()
	trap - INT TERM
	echo "== interrupted: stopping the jobs and their servers"
	while read -r pid kind; do
		if [ "$kind" = postmaster ]; then
			kill -QUIT "$pid" 2>/dev/null && n=$((n + 1))
		else
			procs+=("$pid")
		fi
	done < <(job_processes "${!PID_JOB[@]}")
	[ ${#procs[@]} -eq 0 ] || kill -TERM "${procs[@]}" 2>/dev/null
	echo "== stopped $n PostgreSQL server(s)"
	exit 130
}
trap on_interrupt INT TERM

PASSED=0
FAILED=0
FAILED_NAMES=()
NJOBS=${#all[@]}
NSTARTED=0
NDONE=0
declare -A STARTED=() PID_JOB=() PID_BUSY=()

# finish JOB: count and print its result
finish() {
	local job=$1 ok=0 notok=1 cpu='?'
	[ -f "$RESULTS/$job" ] && read -r ok notok <"$RESULTS/$job"
	[ -s "$RESULTS/$job.cpu" ] && cpu=$(cat "$RESULTS/$job.cpu")
	if [ "$notok" -ne 0 ]; then
		FAILED_NAMES+=("$job")
		cat "$RESULTS/$job.out"
	elif [ "${job%%:*}" = fuzz ]; then
		job="$job ($(tail -1 "$RESULTS/$job.out"))"
	elif [ "${job%%:*}" = tap ] && grep -q '^skipped: ' "$RESULTS/$job.out"; then
		job="$job ($(grep -m1 '^skipped: ' "$RESULTS/$job.out"))"
	fi
	PASSED=$((PASSED + ok))
	FAILED=$((FAILED + notok))
	NDONE=$((NDONE + 1))
	printf '== %-34s %4d passed, %d failed  (%ds, CPU %ss)  [%d of %d done, %ds]\n' "$job" "$ok" "$notok" \
		$((SECONDS - ${STARTED[$1]})) "$cpu" "$NDONE" "$NJOBS" "$SECONDS"
}

# wait_one: wait for any running job and report it
wait_one() {
	local pid
	wait -n -p pid
	finish "${PID_JOB[$pid]}"
	unset "PID_JOB[$pid]" "PID_BUSY[$pid]"
}

# start JOB [busy]
start() {
	STARTED[$1]=$SECONDS
	NSTARTED=$((NSTARTED + 1))
	printf -- '-- %-34s started  [%d of %d]\n' "$1" "$NSTARTED" "$NJOBS"
	if command -v python3 >/dev/null; then
		python3 test/lib/cpu_seconds.py "$RESULTS/$1.cpu" bash "$ROOT/test/run_all.sh" --job "$1" &
	else
		bash "$ROOT/test/run_all.sh" --job "$1" & # no CPU seconds (shown as ?)
	fi
	PID_JOB[$!]=$1
	[ -n "${2:-}" ] && PID_BUSY[$!]=1
}

# A busy job may start while fewer than JOBS busy jobs run; a waiting job
# while fewer than JOBS + WAIT_JOBS jobs run (so once the busy jobs are
# all started, the waiting ones take their lanes too).
while [ ${#busy[@]} -gt 0 ] || [ ${#waiting[@]} -gt 0 ]; do
	if [ ${#busy[@]} -gt 0 ] && [ ${#PID_BUSY[@]} -lt "$JOBS" ] &&
		[ ${#PID_JOB[@]} -lt $((JOBS + WAIT_JOBS)) ]; then
		start "${busy[0]}" busy
		busy=("${busy[@]:1}")
	elif [ ${#waiting[@]} -gt 0 ] && [ ${#PID_JOB[@]} -lt $((JOBS + WAIT_JOBS)) ] &&
		{ [ ${#busy[@]} -eq 0 ] || [ $((${#PID_JOB[@]} - ${#PID_BUSY[@]})) -lt "$WAIT_JOBS" ]; }; then
		start "${waiting[0]}"
		waiting=("${waiting[@]:1}")
	else
		wait_one
	fi
done
while [ ${#PID_JOB[@]} -gt 0 ]; do wait_one; done
for j in "${solo[@]}"; do
	start "$j" busy
	wait_one
done

[ ${#FAILED_NAMES[@]} -ne 0 ] && printf 'failed: %s\n' "${FAILED_NAMES[@]}"
echo "$PASSED passed, $FAILED failed in ${SECONDS}s"
[ "$FAILED" -eq 0 ]
