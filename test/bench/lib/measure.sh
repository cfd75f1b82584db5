# Shell side of lib/measure.sql, sourced by the benchmarks that measure
# queries in fresh backends (run_clusters.sh, run_clusters_spill.sh).

# measure_lines ROUNDS "WORK_MEM ..." "WHAT|QUERY" ...: the psql lines that
# run each query at each work_mem in a fresh backend, round by round.
measure_lines() {
	local rounds=$1 wms=$2 r wm m
	shift 2
	for r in $(seq 1 "$rounds"); do
		for wm in $wms; do
			for m in "$@"; do
				echo "\\set what '${m%%|*}'"
				echo "\\set q '$(printf '%s' "${m#*|}" | sed "s/'/''/g")'"
				echo "\\set round $r"
				echo "\\set wm $wm"
				echo "\\ir $ROOT/test/bench/lib/measure.sql"
			done
		done
	done
}

# measure_medians: the SQL that prints each measurement's medians.
measure_medians() {
	cat <<'SQL'
\echo == medians over the rounds (seconds, temporary MB written, backend peak MB)
SELECT what, percentile_disc(0.5) WITHIN GROUP (ORDER BY seconds) AS seconds,
       max(result) AS rows_out, max(temp_mb) AS temp_mb, max(peak_mb) AS peak_mb
FROM bench_result GROUP BY what ORDER BY what;
SQL
}
