#!/usr/bin/env bash
# neardup test runner: `make test` (and CI's .ci/run) call this.
#
# Suites, in order (name them as arguments to run a subset):
#   unit     C unit tests of the server-free cores (ASan + UBSan)
#   fuzz     libFuzzer harnesses, each for a bounded time (FUZZ_SECONDS)
#   regress  pg_regress suites (sql/, expected/) in a throwaway cluster
#   e2e      scripted end-to-end tests (test/e2e/*.sh) in throwaway clusters
#
# The suites' jobs (the unit tests, each fuzzer, the regress run, each e2e
# script) run ND_TEST_JOBS at a time (default 2, one per core of the CI
# machine), the slowest first; every job has its own cluster, port and
# logs.
#
# Every job reports how many of its checks passed and failed, and the
# seconds it took; the last line is "N passed, N failed" over all of them,
# and the exit code is non-zero if anything failed.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# shellcheck source=lib/pgenv.sh
. test/lib/pgenv.sh

suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(unit fuzz regress e2e)
for s in "${suites[@]}"; do
	case "$s" in
		unit | fuzz | regress | e2e) ;;
		*) echo "unknown suite: $s" >&2; exit 2 ;;
	esac
done

JOBS=${ND_TEST_JOBS:-2}
BUILD=$ROOT/build
RESULTS=$BUILD/results
mkdir -p "$BUILD"
rm -rf "$RESULTS"
mkdir -p "$RESULTS"

# The slowest jobs (pg_cron.sh mostly waits for the scheduler's minute),
# started first so that the two lanes end together.
SLOW_FIRST=(e2e:package regress e2e:pg_cron e2e:index_maintenance e2e:index_replica e2e:index_small_buffers
	e2e:index_crash e2e:large_text e2e:logical_replication e2e:index_concurrency
	e2e:index_workers e2e:upgrade_index)
# Jobs that must run alone, after the others (none: package.sh installs
# into the system's directories, but the other jobs' servers load the
# staged build, which extension_destdir puts first, and it checks that).
SOLO=()

# Counts TAP lines of a log: "ok" and "not ok".
tap_counts() {
	local ok notok
	ok=$(grep -cE '^ok [0-9]+' "$1" || true)
	notok=$(grep -cE '^not ok [0-9]+' "$1" || true)
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
	if ! clang -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-DXXH_INLINE_ALL -Isrc/core src/core/*.c "$f" -o "$bin" >"$log" 2>&1; then
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

# run_job JOB: the job's output goes to its own file, shown when it ends
run_job() {
	local job=$1
	case "$job" in
		unit) job_unit ;;
		fuzz:*) job_fuzz "${job#fuzz:}" ;;
		regress) job_regress ;;
		e2e:*) job_e2e "${job#e2e:}" ;;
	esac >"$RESULTS/$job.out" 2>&1
}

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
	esac
done

in_list() {
	local x=$1
	shift
	for y in "$@"; do [ "$x" = "$y" ] && return 0; done
	return 1
}

parallel=()
solo=()
for j in "${SLOW_FIRST[@]}"; do in_list "$j" "${all[@]}" && parallel+=("$j"); done
for j in "${all[@]}"; do
	if in_list "$j" "${SOLO[@]}"; then
		solo+=("$j")
	elif ! in_list "$j" "${SLOW_FIRST[@]}"; then
		parallel+=("$j")
	fi
done

# The extension is built and staged once, for every job.
if in_list regress "${all[@]}" || [ -n "$(printf '%s\n' "${all[@]}" | grep '^e2e:')" ]; then
	if ! nd_build >"$BUILD/build.log" 2>&1; then
		cat "$BUILD/build.log"
		echo "== build failed"
		echo "0 passed, 1 failed in ${SECONDS}s"
		exit 1
	fi
	nd_stage
	export ND_PREPARED=1
fi

PASSED=0
FAILED=0
FAILED_NAMES=()
declare -A STARTED=() PID_JOB=()

# finish JOB: count and print its result
finish() {
	local job=$1 ok=0 notok=1
	[ -f "$RESULTS/$job" ] && read -r ok notok <"$RESULTS/$job"
	if [ "$notok" -ne 0 ]; then
		FAILED_NAMES+=("$job")
		cat "$RESULTS/$job.out"
	elif [ "${job%%:*}" = fuzz ]; then
		job="$job ($(tail -1 "$RESULTS/$job.out"))"
	fi
	PASSED=$((PASSED + ok))
	FAILED=$((FAILED + notok))
	printf '== %-34s %4d passed, %d failed  (%ds)\n' "$job" "$ok" "$notok" \
		$((SECONDS - ${STARTED[$1]}))
}

# wait_one: wait for any running job and report it
wait_one() {
	local pid
	wait -n -p pid
	finish "${PID_JOB[$pid]}"
	unset "PID_JOB[$pid]"
}

start() {
	STARTED[$1]=$SECONDS
	run_job "$1" &
	PID_JOB[$!]=$1
}

for j in "${parallel[@]}"; do
	while [ ${#PID_JOB[@]} -ge "$JOBS" ]; do wait_one; done
	start "$j"
done
while [ ${#PID_JOB[@]} -gt 0 ]; do wait_one; done
for j in "${solo[@]}"; do
	start "$j"
	wait_one
done

[ ${#FAILED_NAMES[@]} -ne 0 ] && printf 'failed: %s\n' "${FAILED_NAMES[@]}"
echo "$PASSED passed, $FAILED failed in ${SECONDS}s"
[ "$FAILED" -eq 0 ]
