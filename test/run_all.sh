#!/usr/bin/env bash
# neardup test runner: `make test` (and CI's .ci/run) call this.
#
# Suites, in order (name them as arguments to run a subset):
#   unit     C unit tests of the server-free cores (ASan + UBSan)
#   fuzz     libFuzzer harnesses, each for a bounded time (FUZZ_SECONDS)
#   regress  pg_regress suites (sql/, expected/) in a throwaway cluster
#   e2e      scripted end-to-end tests (test/e2e/*.sh) in throwaway clusters
#
# Every suite reports how many of its checks passed and failed; the last line
# is "N passed, N failed" over all of them, and the exit code is non-zero if
# anything failed.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# shellcheck source=lib/pgenv.sh
. test/lib/pgenv.sh

suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(unit fuzz regress e2e)

PASSED=0
FAILED=0
FAILED_NAMES=()

# record NAME PASSED FAILED: the time shown is since the previous record, so
# that a slow suite stands out (CI should stay well under 20 minutes).
LAST_RECORD=$SECONDS
record() {
	PASSED=$((PASSED + $2))
	FAILED=$((FAILED + $3))
	if [ "$3" -ne 0 ]; then FAILED_NAMES+=("$1"); fi
	printf '== %-28s %4d passed, %d failed  (%ds)\n' "$1" "$2" "$3" $((SECONDS - LAST_RECORD))
	LAST_RECORD=$SECONDS
}

# Counts TAP lines of a log: "ok" and "not ok".
tap_counts() {
	local ok notok
	ok=$(grep -cE '^ok [0-9]+' "$1" || true)
	notok=$(grep -cE '^not ok [0-9]+' "$1" || true)
	echo "$ok $notok"
}

BUILD=$ROOT/build
mkdir -p "$BUILD"

# Every suite needs the packages (the unit tests and fuzzers include
# xxhash.h too): install what is missing before the first one runs.
bash test/lib/deps.sh || { echo "neardup: could not install the build dependencies" >&2; exit 1; }

suite_unit() {
	local cc=${CC:-gcc} t bin log rc
	for t in test/unit/test_*.c; do
		[ -e "$t" ] || continue
		bin=$BUILD/$(basename "$t" .c)
		log=$BUILD/$(basename "$t" .c).log
		if ! $cc -std=gnu99 -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined \
			-fno-sanitize-recover=all -DXXH_INLINE_ALL -Isrc/core \
			src/core/*.c "$t" -o "$bin" -lm >"$log" 2>&1; then
			cat "$log"
			record "unit $(basename "$t" .c) (build)" 0 1
			continue
		fi
		"$bin" >"$log" 2>&1
		rc=$?
		read -r ok notok < <(tap_counts "$log")
		if [ $rc -ne 0 ] && [ "$notok" -eq 0 ]; then notok=1; fi
		[ "$notok" -ne 0 ] && grep -vE '^ok ' "$log" | head -50
		record "unit $(basename "$t" .c)" "$ok" "$notok"
	done
}

suite_fuzz() {
	local secs=${FUZZ_SECONDS:-30} f bin log
	if ! command -v clang >/dev/null; then
		record "fuzz (clang missing)" 0 1
		return
	fi
	for f in test/fuzz/fuzz_*.c; do
		[ -e "$f" ] || continue
		bin=$BUILD/$(basename "$f" .c)
		log=$BUILD/$(basename "$f" .c).log
		if ! clang -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
			-DXXH_INLINE_ALL -Isrc/core src/core/*.c "$f" -o "$bin" >"$log" 2>&1; then
			cat "$log"
			record "fuzz $(basename "$f" .c) (build)" 0 1
			continue
		fi
		mkdir -p "$BUILD/corpus-$(basename "$f" .c)"
		# Seed corpus: the repository's own test texts.
		if "$bin" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
			-print_final_stats=1 "$BUILD/corpus-$(basename "$f" .c)" test/fuzz/seeds >"$log" 2>&1; then
			record "fuzz $(basename "$f" .c) ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs)" 1 0
		else
			tail -60 "$log"
			record "fuzz $(basename "$f" .c)" 0 1
		fi
	done
}

suite_regress() {
	local log=$BUILD/regress.log
	nd_build || { record "regress (build)" 0 1; return; }
	nd_stage
	rm -rf results regression.diffs regression.out
	nd_in_cluster make -s PG_CONFIG="$ND_PG_CONFIG" installcheck >"$log" 2>&1
	local ok notok
	ok=$(grep -cE '^(ok|test) .* (ok|\.\.\. ok)' "$log" || true)
	ok=$(grep -cE '(^ok [0-9]+|\.\.\. ok)' "$log" || true)
	notok=$(grep -cE '(^not ok [0-9]+|\.\.\. FAILED)' "$log" || true)
	if [ "$ok" -eq 0 ] && [ "$notok" -eq 0 ]; then notok=1; fi
	if [ "$notok" -ne 0 ]; then
		cat "$log"
		[ -f regression.diffs ] && head -200 regression.diffs
	fi
	record "regress (pg_regress)" "$ok" "$notok"
}

suite_e2e() {
	local t log rc
	nd_build || { record "e2e (build)" 0 1; return; }
	nd_stage
	for t in test/e2e/*.sh; do
		[ -e "$t" ] || continue
		log=$BUILD/e2e-$(basename "$t" .sh).log
		bash "$t" >"$log" 2>&1
		rc=$?
		read -r ok notok < <(tap_counts "$log")
		if [ $rc -ne 0 ] && [ "$notok" -eq 0 ]; then notok=1; fi
		[ "$notok" -ne 0 ] && tail -60 "$log"
		record "e2e $(basename "$t" .sh)" "$ok" "$notok"
	done
}

for s in "${suites[@]}"; do
	case "$s" in
		unit | fuzz | regress | e2e) "suite_$s" ;;
		*) echo "unknown suite: $s" >&2; exit 2 ;;
	esac
done

[ ${#FAILED_NAMES[@]} -ne 0 ] && printf 'failed: %s\n' "${FAILED_NAMES[@]}"
echo "$PASSED passed, $FAILED failed in ${SECONDS}s"
[ "$FAILED" -eq 0 ]
