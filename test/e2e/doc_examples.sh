#!/usr/bin/env bash
# End-to-end: every ```sql block of README.md, doc/*.md and doc/guides/*.md
# runs, so that no example in the docs can rot.
#
#   - Each page's blocks run in order, as a reader would paste them, in one
#     psql session (ON_ERROR_STOP) on a fresh database of their own, after
#     CREATE EXTENSION neardup and the page's fixture
#     test/docs/<page>.setup.sql (test/docs/guides/<page>.setup.sql for a
#     guide), if there is one (the tables the page's
#     examples assume, a few rows each; psql variables it \sets, such as
#     the :last_id of a nightly job, hold for the page's blocks).
#   - A block that starts with CREATE EXTENSION neardup is a reader starting
#     from scratch: it gets a new database, without the harness's CREATE
#     EXTENSION (and the fixture, if it is the page's first block, runs
#     before it).
#   - A block that cannot run as it stands (a signature, a multi-node
#     setup) is marked in the page, on the line right before its fence,
#     with <!-- not run: reason -->; it is reported as a TAP skip and the
#     reasons are counted at the end.
# One TAP line per block, named by page and line of its fence.  An error
# fails its block; the blocks after it on the page were not reached and
# fail too.  One more line: every internal link of the docs, and every
# doc section a code comment cites, resolves (test/docs/check_links.py).
# ND_DOCEX_OUTPUT=1 prints what the examples return;
# ND_DOCEX_PAGES='doc/guides/*' runs only the pages that match that glob.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_ROOT=$ROOT

nd_in_cluster bash -s <<'SCRIPT'
set -uo pipefail
work=$(mktemp -d /tmp/nd-docex.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
n=0
skipped=0
declare -A reasons=()

tap() { n=$((n + 1)); echo "$1 $n - $2"; }

# split_page FILE: writes $work/block.K (the SQL of the K-th ```sql block,
# its fence's indentation removed) and $work/manifest, one line per block:
# "K<TAB>fence line<TAB>not-run reason (or empty)".
split_page() {
	rm -f "$work"/block.* "$work/manifest"
	: >"$work/manifest"
	awk -v dir="$work" '
	function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
	!inb && /^[ \t]*```sql[ \t]*$/ {
		inb = 1; k++; indent = match($0, /[^ \t]/) - 1
		reason = ""
		if (prev ~ /^<!-- not run: .*-->$/) {
			reason = prev; sub(/^<!-- not run: */, "", reason); sub(/ *-->$/, "", reason)
		}
		printf "%d\t%d\t%s\n", k, NR, reason >> (dir "/manifest")
		printf "" > (dir "/block." k)
		next
	}
	inb && /^[ \t]*```[ \t]*$/ { inb = 0; prev = "```"; next }
	inb {
		line = $0
		for (i = 0; i < indent && substr(line, 1, 1) == " "; i++) line = substr(line, 2)
		print line >> (dir "/block." k)
		next
	}
	{ t = trim($0); if (t != "") prev = t }
	' "$1"
}

# run_db PAGE SETUP FIRST_DB BLOCK...: one new database; the blocks run in
# one psql session.  Prints their TAP lines.
db_no=0
run_db() {
	local page=$1 setup=$2 first=$3 k script out err rc last line fence
	shift 3
	db_no=$((db_no + 1))
	local db="docex_$db_no"
	script="$work/script.sql"
	# script line of each block's first line, to name the page's line of an error
	declare -A start=()
	{
		if ! grep -qiE '^[[:space:]]*CREATE EXTENSION neardup' <(grep -vE '^[[:space:]]*(--.*)?$' "$work/block.$1" | head -1); then
			echo 'CREATE EXTENSION neardup;'
		fi
		[ "$first" = 1 ] && [ -n "$setup" ] && cat "$setup"
	} >"$script"
	for k in "$@"; do
		echo "\\echo @@block $k" >>"$script"
		start[$k]=$(($(wc -l <"$script") + 1))
		cat "$work/block.$k" >>"$script"
	done
	createdb "$db" || { tap "not ok" "$page: createdb"; return; }
	psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$script" >"$work/out" 2>"$work/err"
	rc=$?
	# ND_DOCEX_OUTPUT=1 shows what the examples returned.
	[ -n "${ND_DOCEX_OUTPUT:-}" ] && sed "s|^|# $page: |" "$work/out"
	last=$(sed -n 's/^@@block //p' "$work/out" | tail -1)
	for k in "$@"; do
		fence=$(awk -F'\t' -v k="$k" '$1 == k { print $2 }' "$work/manifest")
		if [ "$rc" = 0 ] || { [ -n "$last" ] && [ "$k" -lt "$last" ]; }; then
			tap ok "$page:$fence runs"
		elif [ "$k" = "${last:-}" ]; then
			tap "not ok" "$page:$fence runs"
			line=$(grep -oE "^psql:$script:[0-9]+: ERROR" "$work/err" | head -1 | cut -d: -f3)
			[ -n "$line" ] && echo "# the failing statement ends on $page line $((fence + line - start[$k] + 1)):"
			grep -vE '^(NOTICE|DETAIL|HINT|WARNING)?$' "$work/err" | tail -5 | sed 's/^/# /'
		else
			tap "not ok" "$page:$fence runs (not reached: an earlier block failed)"
		fi
	done
	if [ "$rc" != 0 ] && [ -z "$last" ]; then
		echo "# $page: the fixture or CREATE EXTENSION failed:"
		tail -5 "$work/err" | sed 's/^/# /'
	fi
	dropdb "$db"
}

blocks=0
for page in README.md "$ND_ROOT"/doc/*.md "$ND_ROOT"/doc/guides/*.md; do
	page=${page#"$ND_ROOT"/}
	# shellcheck disable=SC2053 # a glob, on purpose
	[[ $page == ${ND_DOCEX_PAGES:-*} ]] || continue
	split_page "$ND_ROOT/$page"
	rel=${page#doc/}
	setup="$ND_ROOT/test/docs/${rel%.md}.setup.sql"
	[ -f "$setup" ] || setup=
	group=()
	first=1
	while IFS=$'\t' read -r k fence reason; do
		blocks=$((blocks + 1))
		if [ -n "$reason" ]; then
			tap ok "$page:$fence # SKIP not run: $reason"
			skipped=$((skipped + 1))
			reasons[$reason]=$((${reasons[$reason]:-0} + 1))
			continue
		fi
		# A reader starting from scratch: a new database.
		if [ ${#group[@]} -gt 0 ] &&
			grep -vE '^[[:space:]]*(--.*)?$' "$work/block.$k" | head -1 | grep -qiE '^[[:space:]]*CREATE EXTENSION neardup'; then
			run_db "$page" "$setup" "$first" "${group[@]}"
			first=0
			group=()
		fi
		group+=("$k")
	done <"$work/manifest"
	[ ${#group[@]} -gt 0 ] && run_db "$page" "$setup" "$first" "${group[@]}"
done

echo "# $blocks sql blocks; skipped $skipped:"
for r in "${!reasons[@]}"; do echo "#   ${reasons[$r]}x $r"; done | sort
if [ -z "${ND_DOCEX_PAGES:-}" ]; then
	tap "$([ "$blocks" -ge 50 ] && echo ok || echo 'not ok')" "the docs have sql blocks to run ($blocks)"
	guides=$(find "$ND_ROOT/doc/guides" -name '*.md' 2>/dev/null | wc -l)
	tap "$([ "$guides" -ge 5 ] && echo ok || echo 'not ok')" "doc/guides/ has its guides ($guides)"
	if links=$(python3 "$ND_ROOT/test/docs/check_links.py" "$ND_ROOT" 2>&1); then
		tap ok "every internal link and cited doc section resolves"
	else
		tap "not ok" "every internal link and cited doc section resolves"
		echo "$links" | sed 's/^/# /'
	fi
fi
echo "1..$n"
SCRIPT
