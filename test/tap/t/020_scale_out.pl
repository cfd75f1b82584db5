# neardup on a table sharded by id over postgres_fdw (doc/scale-out.md):
# the shards answer what a single node answers, the radius and KNN
# searches run on the shards' indexes, and a failing shard changes nothing.
#
# One coordinator and three shards.  `docs` on the coordinator is
# hash-partitioned by id over one foreign partition per shard, servers with
# extensions 'neardup' and async_capable; each shard has the extension, the
# table, a hamming index (ND_INDEXES, e.g. "gin gist", runs the same checks
# on those) and auto_explain logging every plan.  `docs_one` on the
# coordinator is a local table with the same rows (the single-node
# reference).  Checked:
#   - radius search (sh <~> q <= r, sh <@ hamming_ball(q, r),
#     within(sh, q, r)): the predicate is in every shard's Remote SQL, the
#     shards are scanned by Async Foreign Scans, each shard runs it as an
#     index scan (EXPLAIN of the Remote SQL on the shard, and the plans
#     auto_explain logged on the shards, planned there without sequential
#     scans), and the ids equal the single-node answer for every query code
#     and radius 0..4, custom and generic plans;
#   - KNN: the global 10 nearest equal the single-node ones (ids with an id
#     tiebreak, distances without), through the partitioned table (Merge
#     Append over ordered foreign scans) and one query per shard (LIMIT
#     shipped);
#   - failures: a stopped shard makes queries fail with an error naming its
#     server; a delete across shards that fails halfway (an error after the
#     deletes, a shard killed mid-transaction) changes no shard; an error at
#     commit on one shard leaves each shard all-or-nothing and every group
#     of duplicates with its representative (postgres_fdw has no two-phase
#     commit: which shards committed depends on the order it commits them);
#   - dedup: every pair within 3 bits, pairs whose rows are on different
#     shards included, equals simhash_pairs() on the single node, both from
#     simhash_pairs() over the partitioned table and from a join of band keys
#     that the shards compute (a view on each, foreign partitions over them);
#     the clusters equal the single node's; dedup_keep_one on the
#     partitioned table leaves the rows it leaves on the single node, and
#     changes no shard when it fails (an error after it in its transaction,
#     a shard refusing a delete in the middle of it), and its DELETE and
#     flag UPDATEs ship to the shards as one statement each (id = ANY).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NeardupTAP;
use NeardupShards;

my $rows = 30000;
my @indexes = split ' ', ($ENV{ND_INDEXES} // 'hamming');
my @names = qw(s1 s2 s3);

my $coord = nd_start_node('coord');
my %shard = map {
	$_ => nd_start_node($_,
		conf => "session_preload_libraries = 'auto_explain'\n"
		  . "auto_explain.log_min_duration = 0\n")
} @names;
nd_coordinator($coord, map { $shard{$_} } @names);

sub c  { return $coord->safe_psql('postgres', $_[0]); }
sub on { return $shard{ $_[0] }->safe_psql('postgres', $_[1]); }

# `docs`: one foreign partition per shard over table docs_SHARD there (the
# shard's name in its table's name makes the remote SQL that postgres_fdw
# quotes in its errors name the shard: a connection lost in the middle of a
# transaction is otherwise reported without the server's name).
c(  'CREATE TABLE docs (id bigint NOT NULL, sh simhash64) PARTITION BY HASH (id)'
);
for my $i (0 .. $#names)
{
	my $s = $names[$i];
	on( $s, "SET client_min_messages = warning; CREATE EXTENSION neardup;
		CREATE TABLE docs_$s (id bigint PRIMARY KEY, sh simhash64)");
	on($s, "CREATE INDEX docs_${s}_$_ ON docs_$s USING $_ (sh)") for @indexes;
	c(  "CREATE FOREIGN TABLE docs_$s PARTITION OF docs
		  FOR VALUES WITH (MODULUS 3, REMAINDER $i)
		  SERVER $s OPTIONS (table_name 'docs_$s')");
}
c(  qq{
	CREATE TABLE docs_one (id bigint PRIMARY KEY, sh simhash64);
	CREATE INDEX ON docs_one USING gist (sh);
	INSERT INTO docs_one SELECT i, nd_row_code(i) FROM generate_series(1, $rows) i;
	INSERT INTO docs SELECT id, sh FROM docs_one;
	ANALYZE docs_one;
});
on($_, "VACUUM ANALYZE docs_$_") for @names;
c('ANALYZE docs');
nd_sql_lib($coord, 'scale_out.sql');

# --- the setup ---

# "s1=N s2=N s3=N": the rows of each shard
sub per_shard
{
	return join ' ',
	  map { "$_=" . on($_, "SELECT count(*) FROM docs_$_") } @names;
}
my $counts0 = per_shard();
note "rows per shard: $counts0";
my $total = 0;
$total += $_ for $counts0 =~ /=(\d+)/g;
ok($total == $rows && $counts0 !~ /=0\b/,
	"the $rows rows are spread over the three shards");
my %versions = map {
	$_->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'neardup'") => 1
} $coord, values %shard;
my $opts = c(
	q{SELECT count(*) FROM pg_foreign_server
	WHERE 'extensions=neardup' = ANY (srvoptions)
	  AND 'async_capable=true' = ANY (srvoptions)});
ok( keys %versions == 1 && $opts == 3,
	"neardup in one version on every node; every server has extensions 'neardup' and async_capable"
);

# --- radius search: plans ---
my $q = c('SELECT nd_center(1)');

# plan_ok(LABEL, SQL): EXPLAIN VERBOSE (the last statement of SQL, after a
# PREPARE or SET) has three Async Foreign Scans, each with the radius
# predicate in its Remote SQL, and nothing filtered on the coordinator.
sub plan_ok
{
	my ($label, $sql) = @_;
	my $plan = nd_sql($coord, $sql);
	ok( nd_lines($plan, qr/Async Foreign Scan/) == 3
		  && nd_lines($plan,
			qr/Remote SQL: SELECT .* WHERE .*(public\.within\(sh, |sh OPERATOR\(public\.<@\) )/
		  ) == 3
		  && $plan !~ /Filter:/,
		"$label: predicate shipped to every shard, Async Foreign Scans"
	) or diag $plan;
	return;
}
for my $form (
	'sh <~> $1 <= $2',
	'sh <@ hamming_ball($1, $2)',
	'within(sh, $1, $2)')
{
	(my $lit = $form) =~ s/\$1/'$q'::simhash64/;
	$lit =~ s/\$2/3/;
	plan_ok("constant: $lit",
		"EXPLAIN VERBOSE SELECT id FROM docs WHERE $lit");
	plan_ok(
		"generic plan: $form", qq{
		PREPARE p(simhash64, int) AS SELECT id FROM docs WHERE $form;
		SET plan_cache_mode = force_generic_plan;
		EXPLAIN VERBOSE EXECUTE p('$q', 3);
	});
}
my $plan = c("EXPLAIN VERBOSE SELECT id FROM docs WHERE sh <~> '$q' <= 3");
note $plan;

# Each shard plans the Remote SQL onto its index: EXPLAIN it there.
for my $s (@names)
{
	my ($remote) = $plan =~ /Remote SQL: (.* FROM public\.docs_$s .*)/;
	my $splan = on($s, "EXPLAIN $remote");
	note "$s: $splan";
	ok( $splan =~
		  /(Index Scan|Index Only Scan|Bitmap Index Scan) (using|on) docs_s[0-9]_(gin|gist|hamming)/
		  && $splan !~ /Seq Scan/,
		"$s plans the Remote SQL onto its own index");
}

# --- radius search: results ---
# seqscan(on|off): enable_seqscan on every shard, for the sessions that
# start after it.  The radius checks run with it off, so that each radius
# query the index can answer runs on it: around the all-zero and all-one
# codes a few percent of the rows are within the radius, and a Seq Scan
# would be the cheaper plan there.
sub seqscan
{
	my ($value) = @_;
	for my $s (@names)
	{
		on($s, "ALTER SYSTEM SET enable_seqscan = $value");
		on($s, 'SELECT pg_reload_conf()');
		$shard{$s}->poll_query_until('postgres',
			"SELECT current_setting('enable_seqscan') = '$value'")
		  or die "enable_seqscan is not $value on $s";
	}
	return;
}
seqscan('off');
my %log_from = map { $_ => -s $shard{$_}->logfile } @names;
for my $mode (qw(force_custom_plan force_generic_plan))
{
	my $out = nd_sql($coord,
		"SET plan_cache_mode = $mode; SELECT nd_shard_radius_check()");
	note "$mode: $out";
	like(
		$out,
		qr/^checks=[1-9][0-9]* mismatches=0 rows=[1-9]/,
		"radius 0..4, three spellings, every query code ($mode): sharded = single node"
	);
}
seqscan('on');

# What the shards ran: auto_explain logged every remote query's plan (a
# message whose lines after the first begin with a tab).  A radius query
# is a cursor whose query has the radius predicate; it ran on an index if
# its plan has an index scan of the shard's table and no Seq Scan.
for my $s (@names)
{
	my $log = slurp_file($shard{$s}->logfile, $log_from{$s});
	my ($nq, $nidx, $first, $other) = (0, 0);
	for my $msg (split /\n(?!\t)/, $log)
	{
		next unless $msg =~ /LOG:  duration: .* plan:/;
		next
		  unless $msg =~ /Query Text: DECLARE .* CURSOR FOR\n\t(.*)/
		  && $1 =~
		  /WHERE \(*(public\.within\(sh, |sh OPERATOR\(public\.<@\) )/;
		$nq++;
		$first //= $msg;
		if ($msg =~
			/(Index Scan|Index Only Scan|Bitmap Index Scan) (using|on) docs_s[0-9]_(gin|gist|hamming)/
			&& $msg !~ /Seq Scan on docs_s/)
		{
			$nidx++;
		}
		else
		{
			$other //= $msg;
		}
	}
	note
	  "$s: $nq radius queries logged by auto_explain, $nidx on an index; the first:\n"
	  . ($first // '');
	ok($nq > 100 && $nq == $nidx,
		"$s ran every radius query it received on its index (auto_explain)")
	  or diag "the first not on an index:\n" . ($other // '');
}

# --- KNN ---
my $out = nd_sql($coord, 'SELECT nd_shard_knn_check()');
note $out;
like(
	$out,
	qr/^checks=[1-9][0-9]* mismatches=0$/,
	'KNN top 10: sharded = single node (ids with tiebreak, distances without, per-shard form)'
);
$plan =
  c("EXPLAIN VERBOSE SELECT id FROM docs ORDER BY sh <~> '$q', id LIMIT 10");
note $plan;
ok( $plan =~ /Merge Append/ && nd_lines($plan,
		qr/Remote SQL: SELECT .* ORDER BY \(sh OPERATOR\(public\.<~>\) '$q'\) ASC NULLS LAST, id ASC NULLS LAST$/
	) == 3,
	"KNN on the partitioned table: Merge Append of the shards' ordered scans (ORDER BY shipped, no LIMIT)"
);
$plan = c(
	"EXPLAIN VERBOSE SELECT id FROM docs WHERE sh <~> '$q' <= 5 ORDER BY sh <~> '$q', id LIMIT 10"
);
is( nd_lines(
		$plan,
		qr/Remote SQL: SELECT .* WHERE \(public\.within\(sh, .*, 5\)\)/),
	3,
	'KNN capped by a radius: the radius condition shipped to every shard');

# the plans of the per-shard queries, as auto_explain logs them
my $explain = q{
	LOAD 'auto_explain';
	SET auto_explain.log_min_duration = 0;
	SET auto_explain.log_nested_statements = on;
	SET auto_explain.log_verbose = on;
	SET client_min_messages = log;
};
$plan = nd_sql($coord, "$explain SELECT * FROM nd_knn_per_shard('$q', 10)");
note join "\n", grep { /Remote SQL/ } split /\n/, $plan;
# (Whether the second query's ORDER BY and LIMIT are shipped too is the
# planner's choice: few rows are expected within the radius.)
ok( nd_lines($plan,
		qr/Remote SQL: SELECT sh FROM .* ORDER BY .* LIMIT 10::bigint$/) == 3
	  && nd_lines($plan,
		qr/Remote SQL: SELECT id, sh FROM .* WHERE \(public\.within\(sh, /)
	  == 3,
	'KNN by queries per shard: LIMIT shipped to every shard, then a radius-capped query'
);

# --- failures ---
$shard{s2}->stop;
my $rc;
($rc, $out) =
  nd_sql($coord, "SELECT count(*) FROM docs WHERE sh <~> '$q' <= 3");
note $out;
ok( $rc != 0 && $out =~ /could not connect to server "s2"/,
	's2 down: radius query fails, naming server s2 (no partial answer)');
($rc, $out) =
  nd_sql($coord, "SELECT id FROM docs ORDER BY sh <~> '$q', id LIMIT 10");
ok( $rc != 0 && $out =~ /could not connect to server "s2"/,
	's2 down: KNN query fails, naming server s2');
$shard{s2}->start;

# The delete of a dedup pass: every row with an exact duplicate of smaller
# id (the smallest id of each group of equal codes is its representative).
my $dups = 'SELECT id FROM docs_one d WHERE EXISTS '
  . '(SELECT 1 FROM docs_one e WHERE e.sh = d.sh AND e.id < d.id)';
my $ndups = c("SELECT count(*) FROM ($dups) s");
note "$ndups rows to delete";

# Inside the transaction, before the error, the deletes are visible (so
# that the check is not vacuous).
($rc, $out) = nd_sql(
	$coord, "BEGIN; DELETE FROM docs WHERE id IN ($dups);
	SELECT count(*) FROM docs; SELECT 1 / 0; COMMIT;");
note $out;
ok( $rc != 0
	  && (split /\n/, $out)[0] == $rows - $ndups
	  && per_shard() eq $counts0,
	'a delete across shards, then an error in the same transaction: every shard unchanged'
);

# s3 stopped (immediate) between two deletes of one transaction
my $session = $coord->background_psql('postgres', on_error_stop => 0);
my $s3_seen = $session->query(
	"BEGIN; DELETE FROM docs WHERE id IN ($dups) AND id % 2 = 0;
	SELECT count(*) FROM docs_s3;");
$shard{s3}->stop('immediate');
$session->query("DELETE FROM docs WHERE id IN ($dups) AND id % 2 = 1");
$session->query('COMMIT');
my $errors = $session->{stderr};
$session->quit;
note "docs_s3 inside the transaction: $s3_seen rows; $errors";
$shard{s3}->start;
my $after = per_shard();
note "after: $after";
my ($s3_rows) = $counts0 =~ /s3=(\d+)/;
ok( $s3_seen < $s3_rows
	  && $errors =~ /ERROR/
	  && $errors =~ /docs_s3/
	  && $after eq $counts0,
	'a shard killed in the middle of a delete across shards: error naming it, every shard unchanged'
);

# An error at commit on s3 only (a deferred constraint trigger there).
on( 's3', q{
	CREATE FUNCTION fail() RETURNS trigger LANGUAGE plpgsql
	  AS $$BEGIN RAISE EXCEPTION 'refused by s3'; END$$;
	CREATE CONSTRAINT TRIGGER fail AFTER DELETE ON docs_s3
	  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fail();
});
($rc, $out) =
  nd_sql($coord, "BEGIN; DELETE FROM docs WHERE id IN ($dups); COMMIT;");
note $out;
$after = per_shard();
note "before: $counts0\nafter:  $after";
# Each shard either kept all its rows or lost exactly its duplicates.
my $dup_ids =
  c("SELECT coalesce(string_agg(id::text, ','), '0') FROM ($dups) s");
my $allornothing = 1;
for my $s (@names)
{
	my ($was) = $counts0 =~ /$s=(\d+)/;
	my ($now) = $after =~ /$s=(\d+)/;
	my $left = on($s, "SELECT count(*) FROM docs_$s WHERE id IN ($dup_ids)");
	$allornothing = 0 unless $now == $was || $left == 0;
}
my $lost = c(
	q{SELECT count(*) FROM (SELECT DISTINCT sh FROM docs_one WHERE sh IS NOT NULL
	  EXCEPT SELECT sh FROM docs) s});
ok( $rc != 0
	  && $out =~ /refused by s3/
	  && ($after =~ /(s3=\d+)/)[0] eq ($counts0 =~ /(s3=\d+)/)[0]
	  && $allornothing
	  && $lost == 0,
	'an error at commit on s3: s3 unchanged, every shard all-or-nothing, no code lost'
);
on('s3', 'DROP TRIGGER fail ON docs_s3');
# Back to the rows of docs_one, whatever that commit left.
c(  'BEGIN; DELETE FROM docs; INSERT INTO docs SELECT id, sh FROM docs_one; COMMIT;'
);
is(per_shard(), $counts0, 'the sharded table reloaded');

# --- dedup across shards ---
# Which shard holds each id, for counting the pairs that cross shards.
c(  q{
	CREATE TABLE id_shard AS SELECT id, tableoid::regclass::text AS part FROM docs;
	CREATE TABLE pairs_one AS SELECT * FROM simhash_pairs('SELECT id, sh FROM docs_one', 3);
});
my $npairs_one = c('SELECT count(*) FROM pairs_one');

# same_pairs(LABEL, QUERY): QUERY's (id_a, id_b, distance) on the
# coordinator equal simhash_pairs() on the single-node table, and some
# cross shards.
sub same_pairs
{
	my ($label, $query) = @_;
	my $out = nd_sql(
		$coord, qq{
		CREATE TEMP TABLE got AS $query;
		SELECT (SELECT count(*) FROM got) || ' pairs, '
		  || (SELECT count(*) FROM got g JOIN id_shard a ON a.id = g.id_a
		        JOIN id_shard b ON b.id = g.id_b WHERE a.part <> b.part) || ' across shards, '
		  || (SELECT count(*) FROM (SELECT id_a, id_b, distance FROM got
		        EXCEPT ALL SELECT id_a, id_b, distance FROM pairs_one) x) || ' extra, '
		  || (SELECT count(*) FROM (SELECT id_a, id_b, distance FROM pairs_one
		        EXCEPT ALL SELECT id_a, id_b, distance FROM got) x) || ' missing';
	});
	note "$label: $out (single node: $npairs_one pairs)";
	like(
		$out,
		qr/^[1-9][0-9]* pairs, [1-9][0-9]* across shards, 0 extra, 0 missing$/,
		"$label: every pair within 3, across shards too = single node");
	return;
}
same_pairs('simhash_pairs over the partitioned table',
	"SELECT * FROM simhash_pairs('SELECT id, sh FROM docs', 3)");

# Band keys computed on the shards: a view on each shard, a foreign
# partition of docs_keys over it; the join on the keys runs on the
# coordinator.
c('CREATE TABLE docs_keys (id bigint, sh simhash64, key bigint, ord int)'
	  . ' PARTITION BY HASH (id)');
for my $i (0 .. $#names)
{
	my $s = $names[$i];
	on( $s, "CREATE VIEW docs_keys_$s AS
		SELECT d.id, d.sh, u.key, u.ord::int AS ord
		FROM docs_$s d, unnest(simhash_band_keys(d.sh, 3)) WITH ORDINALITY u(key, ord)"
	);
	c(  "CREATE FOREIGN TABLE docs_keys_$s PARTITION OF docs_keys
		  FOR VALUES WITH (MODULUS 3, REMAINDER $i)
		  SERVER $s OPTIONS (table_name 'docs_keys_$s')");
}
$plan = c('EXPLAIN VERBOSE SELECT count(*) FROM docs_keys');
is(nd_lines($plan, qr/Remote SQL: SELECT .*FROM public\.docs_keys_s[0-9]/),
	3, "band keys: each shard computes its rows' keys (a view there)");
same_pairs(
	"band-key join of the shards' keys",
	q{SELECT a.id AS id_a, b.id AS id_b, a.sh <~> b.sh AS distance
	FROM docs_keys a JOIN docs_keys b ON a.key = b.key AND a.ord = b.ord AND a.id < b.id
	WHERE a.sh <~> b.sh <= 3 AND simhash_band_first(a.sh, b.sh, a.ord, 3)});

my $sharded_pairs =
  q{'SELECT id_a, id_b FROM simhash_pairs(''SELECT id, sh FROM docs'', 3)'};
my $one_pairs = q{'SELECT id_a, id_b FROM pairs_one'};
$out = nd_sql(
	$coord, qq{
	SELECT (SELECT count(*) FROM dedup_clusters($sharded_pairs) s
	          NATURAL FULL JOIN dedup_clusters($one_pairs) o
	        WHERE s.id IS NULL OR o.id IS NULL) || ' ' ||
	       (SELECT count(*) FROM (SELECT * FROM dedup_clusters($sharded_pairs)
	          EXCEPT SELECT * FROM dedup_clusters($one_pairs)) x) || ' ' ||
	       (SELECT count(DISTINCT cluster_id) FROM dedup_clusters($one_pairs))});
note "clusters: $out (unmatched ids, differing, clusters)";
like(
	$out,
	qr/^0 0 [1-9][0-9]*$/,
	"dedup_clusters from the sharded pairs = from the single node's");

# Keep one per cluster across shards, in one coordinator transaction.
my $keep = "SELECT dedup_keep_one('docs', 'id', $sharded_pairs)";
my $nkeep = c(
	"SELECT count(*) FROM dedup_representatives('docs_one', 'id', $one_pairs)
	WHERE id <> representative");
note "keep-one deletes $nkeep rows";
($rc, $out) = nd_sql($coord,
	"BEGIN; $keep; SELECT count(*) FROM docs; SELECT 1 / 0; COMMIT;");
note $out;
ok( $rc != 0
	  && (split /\n/, $out)[1] == $rows - $nkeep
	  && per_shard() eq $counts0,
	'dedup_keep_one across shards, then an error in its transaction: every shard unchanged'
);
# A shard refusing a delete in the middle of keep-one's DELETE (a row
# trigger on s3): the statement fails after other shards deleted.
on('s3',
	'CREATE TRIGGER fail BEFORE DELETE ON docs_s3 FOR EACH ROW EXECUTE FUNCTION fail()'
);
($rc, $out) = nd_sql($coord, $keep);
note $out;
ok( $rc != 0 && $out =~ /refused by s3/ && per_shard() eq $counts0,
	'dedup_keep_one failing on s3 in the middle: every shard unchanged');
on('s3', 'DROP TRIGGER fail ON docs_s3');

# keep-one's statements ship to the shards as one DELETE / UPDATE each with
# "id = ANY", not a join that makes postgres_fdw read every shard FOR
# UPDATE and change one row per round trip: the plans of the nested
# statements, through auto_explain, rolled back.  Flag mode too, on a
# column added to the shards and the coordinator.
on($_, "ALTER TABLE docs_$_ ADD COLUMN dup bool") for @names;
c('ALTER TABLE docs ADD COLUMN dup bool');
$out = nd_sql($coord, "$explain BEGIN; $keep; ROLLBACK;");
my $ndel = nd_lines($out,
	qr/Remote SQL: DELETE FROM public\.docs_s[123] WHERE \(\(id = ANY \(/);
# the direct-modify node under each partition's ModifyTable entry
my $nfd = nd_lines($out, qr/->  Foreign Delete on /);
note "keep-one delete: $ndel shipped DELETEs, $nfd Foreign Delete, "
  . nd_lines($out, qr/FOR UPDATE/)
  . ' FOR UPDATE';
ok( $ndel == 3 && $nfd == 3 && $out !~ /FOR UPDATE/,
	"dedup_keep_one's DELETE ships to every shard as one DELETE with id = ANY"
  )
  or diag join "\n",
  map { substr($_, 0, 160) } grep { /Foreign|Remote SQL|ERROR/ } split /\n/,
  $out;
$out = nd_sql(
	$coord, qq{$explain BEGIN;
	SELECT dedup_keep_one('docs', 'id', $sharded_pairs, flag_column => 'dup');
	SET client_min_messages = warning;
	SELECT count(*) FILTER (WHERE dup) || ' ' || count(*) FILTER (WHERE NOT dup)
	       || ' ' || count(*) FROM docs;
	ROLLBACK;});
my $nupd = nd_lines($out,
	qr/Remote SQL: UPDATE public\.docs_s[123] SET dup = .* WHERE .*\(id = ANY \(/
);
my ($flags) = (grep { /^[0-9]+ [0-9]+ [0-9]+$/ } split /\n/, $out)[-1];
$flags //= '';
note "keep-one flag: $nupd shipped UPDATEs; flagged, kept, rows: $flags";
ok( $nupd == 6 && $out !~ /FOR UPDATE/ && $flags =~ /^$nkeep [0-9]+ $rows$/,
	"dedup_keep_one's flag UPDATEs ship to every shard, and flag exactly the rows keep-one deletes"
  )
  or diag join "\n",
  map { substr($_, 0, 160) } grep { /Foreign|Remote SQL|ERROR/ } split /\n/,
  $out;
$out = nd_sql($coord, $keep);
c("SELECT dedup_keep_one('docs_one', 'id', $one_pairs)");
my $diff = c(
	q{SELECT count(*) FROM (SELECT id FROM docs EXCEPT SELECT id FROM docs_one
	UNION ALL SELECT id FROM docs_one EXCEPT SELECT id FROM docs) x});
note "keep-one: $out rows deleted; left: " . per_shard();
ok( $out eq $nkeep && $diff == 0,
	'dedup_keep_one across shards: the rows left = those left on the single node'
);

$_->stop for $coord, values %shard;
done_testing();
