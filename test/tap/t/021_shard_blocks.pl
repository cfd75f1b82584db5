# The block-sharded layout (doc/scale-out.md, "The block layout"): Manku's
# permuted tables spread over shards with postgres_fdw answer what a single
# node answers, touch few shards, and survive a moved partition, a stopped
# shard and a failover.
#
# One coordinator and four shards, a streaming standby of one shard, and a
# fifth shard added later.  On the coordinator, layout `fp` (4 blocks, 8
# partitions per copy) made by simhash_layout_create, and `fp_one`, a local
# table with the same rows (the single-node reference).  Checked:
#   - the placement: 32 partitions, 8 per server; the rows of each copy
#     spread over every shard, each copy holding every row;
#   - radius search (simhash_layout_within) at radius 0..5 for random,
#     planted and all-zero/all-one codes: each row once, ids and distances
#     equal to the single node's;
#   - at most radius + 1 shards touched (4 at radius 3): the plan of the
#     query (simhash_layout_within_sql) has one Foreign Scan per copy, and
#     the shards' own statistics show scans on at most that many shards;
#   - KNN (simhash_layout_nearest) equal to the single node's, ties by id,
#     near codes and codes with nothing within the layout's radius;
#   - inserts and deletes through the coordinator reach every copy, and
#     simhash_layout_check says so (and catches a stray row);
#   - the nightly clusters (simhash_layout_clusters: each shard clusters
#     its partitions, edges cross) equal simhash_clusters on the single node;
#   - moving a partition to a new shard keeps every answer (what a failed
#     commit leaves at each step of a move: 022_shard_move.pl);
#   - the near-duplicate constraint on every partition (layout `fx`,
#     simhash_shard_create(..., exclude_within => 3)) holds for the whole
#     layout: near copies in any block are refused through the coordinator,
#     in one statement and between two concurrent transactions;
#   - a stopped shard: an error that names it (the layout and the server in
#     its DETAIL, a context of a few lines), while a query whose
#     partitions are elsewhere still answers; its promoted standby, the
#     server repointed: the answers equal the single node's again.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use NeardupTAP;
use NeardupShards;

my $rows = 20000;
my $parts = 8;
my @names = qw(s1 s2 s3 s4);

my $coord = nd_start_node('coord');
my %shard;
for my $s (@names, 's5')
{
	$shard{$s} = nd_start_node($s, allows_streaming => $s eq 's2');
	$shard{$s}->safe_psql(
		'postgres', qq{
		SET client_min_messages = warning;
		CREATE EXTENSION neardup;
		SELECT simhash_shard_create('fp', 4, $parts);
		SELECT simhash_shard_create('fx', 4, 4, exclude_within => 3);
	});
}
$shard{s2}->backup('s2_backup');
my $s2r = PostgreSQL::Test::Cluster->new('s2r');
$s2r->init_from_backup($shard{s2}, 's2_backup', has_streaming => 1);
$s2r->start;

nd_coordinator($coord, map { $shard{$_} } @names, 's5');

sub c  { return $coord->safe_psql('postgres', $_[0]); }
sub on { return $shard{ $_[0] }->safe_psql('postgres', $_[1]); }

c(  qq{
	CREATE TABLE fp_one (id bigint PRIMARY KEY, sh simhash64 NOT NULL);
	INSERT INTO fp_one SELECT i, nd_row_code(i) FROM generate_series(1, $rows) i
	  WHERE nd_row_code(i) IS NOT NULL;
});

# --- the layout ---
my $placement = join ' ', split /\n/, c(
	"SELECT server, count(*)
	FROM simhash_layout_create('fp', ARRAY['s1','s2','s3','s4'], 4, $parts)
	GROUP BY 1 ORDER BY 1");
note "partitions per server: $placement";
nd_sql_lib($coord, 'shard_blocks.sql');
is( $placement,
	's1|8 s2|8 s3|8 s4|8',
	'32 partitions, 8 on each of the four servers');

my $inserted =
  c("SELECT simhash_layout_insert('fp', 'SELECT id, sh FROM fp_one')");
my $want = c('SELECT count(*) FROM fp_one');

# the row counts of copies 1 to 4 of layout LAYOUT, through the coordinator
sub copy_counts
{
	my ($layout) = @_;
	return c('SELECT ' . join " || ' ' || ",
		map { "(SELECT count(*) FROM ${layout}_b$_)" } 1 .. 4);
}
my $copies = copy_counts('fp');

# "s1=N ...": the rows of every copy's partitions on each shard
sub shard_rows
{
	my @out;
	for my $s (@_)
	{
		my @tables = split /\n/, on(
			$s,
			q{SELECT relname FROM pg_class
			WHERE relname ~ '^fp_b[0-9]+_p[0-9]+$' AND relkind = 'r'});
		push @out,
		  "$s="
		  . on(
			$s,
			'SELECT 0' . join '',
			map { " + (SELECT count(*) FROM $_)" } @tables);
	}
	return "@out";
}
my $per_shard = shard_rows(@names);
note
  "inserted $inserted, copies $copies, rows per shard (all copies) $per_shard";
ok( $inserted == $want
	  && $copies eq "$want $want $want $want"
	  && $per_shard !~ /=0\b/,
	'simhash_layout_insert puts every row in each of the 4 copies, spread over every shard'
);
on($_, 'ANALYZE') for @names;

# copy 1's indexes have a table per block, copy b's only the table of block b
# (their lists flushed into runs first)
on('s1',
	q{SELECT hamming_merge(indexrelid) FROM pg_index
	  WHERE indexrelid::regclass::text ~ '^fp_b[0-9]+_p[0-9]+_sh_idx$'});
my $tables = on(
	's1', q{
	SELECT string_agg(DISTINCT substring(i.indexrelid::regclass::text from '_b([0-9]+)_') || ':'
	                  || r.tables || ':' || coalesce(o.opt, '-'), ' ')
	FROM pg_index i
	CROSS JOIN LATERAL hamming_runs(i.indexrelid) r
	LEFT JOIN LATERAL (SELECT string_agg(x, ',') AS opt FROM pg_class c, unnest(c.reloptions) x
	                   WHERE c.oid = i.indexrelid AND x LIKE 'only_block=%') o ON true
	WHERE i.indexrelid::regclass::text ~ '^fp_b[0-9]+_p[0-9]+_sh_idx$'});
note "s1's indexes (copy:tables:option): $tables";
is($tables, '1:4:- 2:1:only_block=2 3:1:only_block=3 4:1:only_block=4',
	'simhash_shard_create: copy 1 keeps a table per block, copy b only the table of block b');
my $keys = on(
	's1', q{
	SELECT string_agg(DISTINCT substring(c.relname from '_b([0-9]+)_') || ':'
	                  || (SELECT count(*) FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary), ' ')
	FROM pg_class c WHERE c.relname ~ '^fp_b[0-9]+_p[0-9]+$' AND c.relkind = 'r'});
is($keys, '1:1 2:0 3:0 4:0',
	'simhash_shard_create: only copy 1 has a primary key (deletes find the other copies\' rows by code)');

# --- radius search ---
my $out = c('SELECT nd_blocks_radius_check()');
note $out;
like(
	$out,
	qr/^checks=[1-9][0-9]* mismatches=0 rows=[1-9]/,
	'radius 0..5, every query code: each row once, equal to the single node');

# --- shards touched ---
my $q = c('SELECT nd_center(1)');
my $plan =
  c('EXPLAIN VERBOSE '
	  . c("SELECT simhash_layout_within_sql('fp', '$q', 3)"));
note join "\n", grep { /Foreign Scan|Remote SQL/ } split /\n/, $plan;
my %seen;
my @parts = grep { !$seen{$_}++ }
  $plan =~ /Foreign Scan on public\.(fp_b[0-9]+_p[0-9]+)/g;
my $servers = c(
	"SELECT count(DISTINCT s.srvname) FROM pg_foreign_table f
	  JOIN pg_foreign_server s ON s.oid = f.ftserver
	WHERE f.ftrelid::regclass::text = ANY ('{" . join(',', @parts) . "}')");
ok(      nd_lines($plan, qr/Async Foreign Scan/) == 4
	  && @parts == 4
	  && (
		grep {
				 /Remote SQL: .*WHERE .*sh OPERATOR\(public\.<\@\) '\([0-9a-f]{16},3,([1-4]),4\)'::public\.hamming_block_ball.*simhash_block\(sh, \1, 4\) = [0-9]+/
		} split /\n/,
		$plan) == 4
	  && $servers <= 4,
	"radius 3: the plan reads one partition of each of the 4 copies (@parts on $servers servers), each copy's block ball and block shipped"
);
my ($remote) = $plan =~ /Remote SQL: (.*)/;
my ($part1) = $remote =~ /FROM public\.(fp_b1_p[0-9]+)/;
my $splan = '';
for my $s (@names)
{
	$splan = on($s, "SET enable_seqscan = off; EXPLAIN $remote");
	if ($splan =~ /Index/)
	{
		note "$s: $splan";
		last;
	}
}
like(
	$splan,
	qr/Index Scan using ${part1}_sh_idx.*\n\s*Index Cond: \(sh <\@ '[^']*'::hamming_block_ball\)/,
	'the shard answers with its hamming index, the block ball its condition');

# until no connection of the coordinator is left on any shard (a backend
# reports its statistics before it leaves pg_stat_activity)
sub no_fdw_connections
{
	$shard{$_}->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'postgres_fdw'"
	  )
	  or die "a connection of the coordinator on $_ stays"
	  for @names;
	return;
}

# touched(R, CODE): how many shards ran a scan for simhash_layout_within at
# radius R (their statistics, reset before; the coordinator's connections
# closed after, so that the shards' backends exit and report them).
sub touched
{
	my ($r, $code) = @_;
	no_fdw_connections();
	on($_, 'SELECT pg_stat_reset()') for @names;
	c(  "SELECT count(*) FROM simhash_layout_within('fp', '$code', $r);
		SELECT postgres_fdw_disconnect_all();");
	no_fdw_connections();
	return scalar grep {
		on( $_,
			q{SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0)
			FROM pg_stat_user_tables WHERE relname ~ '^fp_b'}) > 0
	} @names;
}
my $absent = c(q{SELECT ('x' || md5('absent1'))::bit(64)::bigint::simhash64});
my @worst;
my $bad = 0;
for my $rc ([ 1, $q ], [ 3, $q ], [ 3, $absent ], [ 3, '0000000000000000' ])
{
	my $t = touched(@$rc);
	push @worst, "r$rc->[0]:$t";
	$bad = 1 if $t > $rc->[0] + 1;
}
my $all = touched(5, $q);
note "shards touched per query (radius:shards): @worst; radius 5: $all";
ok( $bad == 0 && $all == 4,
	"the shards' statistics: radius r touches at most r + 1 shards; radius 5 (past the blocks) all four"
);

# --- KNN ---
$out = c('SELECT nd_blocks_knn_check()');
note $out;
like(
	$out,
	qr/^checks=[1-9][0-9]* mismatches=0 far=[1-9]/,
	'KNN 1, 10, 60 for every query code equals the single node (ties by id), answers past the radius included'
);

# Partitions under other names (renamed here): the search finds each by its
# bounds and still names it, read together with the others, same answers.
c(  'ALTER TABLE fp_b1_p5 RENAME TO fp_b1_p5x; ALTER TABLE fp_b3_p6 RENAME TO fp_b3_p6x'
);
$plan =
  c('EXPLAIN VERBOSE '
	  . c("SELECT simhash_layout_within_sql('fp', '$q', 3)"));
$out = c('SELECT nd_blocks_radius_check(3)');
c(  'ALTER TABLE fp_b1_p5x RENAME TO fp_b1_p5; ALTER TABLE fp_b3_p6x RENAME TO fp_b3_p6'
);
note "two partitions renamed: $out";
ok( $out =~ /mismatches=0 rows=[1-9]/
	  && $plan =~ /Async Foreign Scan on public\.fp_b1_p5x/
	  && $plan =~ /Async Foreign Scan on public\.fp_b3_p6x/
	  && nd_lines($plan, qr/Async Foreign Scan/) == 4,
	'partitions renamed: the search finds them by their bounds (4 async scans), same answers'
);

# --- the nightly clusters ---
$out = c('SELECT nd_blocks_clusters_check()');
note $out;
like(
	$out,
	qr/^missing=0 extra=0 rows=[1-9]/,
	'simhash_layout_clusters (each shard clusters its partitions, edges cross) equals simhash_clusters on the single node'
);

# --- writes through the coordinator ---
# A delete of one id reads every partition of copy 1 and one partition of
# each other copy (the one of the row's block value): the shards'
# statistics, as for the searches above.  (How each shard reads its table,
# by index or sequentially, is its planner's choice for these small tables.)
no_fdw_connections();
on($_, 'SELECT pg_stat_reset()') for @names;
my %logpos = map { $_ => -s $shard{$_}->logfile } @names;
my $one_id = c('SELECT min(id) FROM fp_one WHERE id % 97 = 3');
my ($one) = split /\n/, c("SELECT simhash_layout_delete('fp', ARRAY[$one_id]::bigint[]);
	SELECT postgres_fdw_disconnect_all();");
c("DELETE FROM fp_one WHERE id = $one_id");
no_fdw_connections();
my $scans = join ' ', map {
	on( $_, q{
		SELECT coalesce(string_agg(substring(relname from '_b([0-9]+)_') || ':'
		                           || CASE WHEN coalesce(seq_scan, 0) > 0 THEN 'seq' ELSE 'idx' END, ' '
		                           ORDER BY relname), '')
		FROM pg_stat_user_tables
		WHERE relname ~ '^fp_b[0-9]+_p[0-9]+$' AND coalesce(seq_scan, 0) + coalesce(idx_scan, 0) > 0})
} @names;
my %per_copy;
$per_copy{$1}++ while $scans =~ /\b([0-9]+):(?:seq|idx)\b/g;
note "one id deleted ($one row); partitions scanned (copy:how): $scans";
ok( $one == 1
	  && ($per_copy{1} // 0) == $parts
	  && !grep({ ($per_copy{$_} // 0) != 1 } 2 .. 4),
	"a delete of one id: every partition of copy 1, one partition of each other copy"
);
# ... each as one DELETE shipped whole, its code in it as a bigint array
# (not rows fetched and deleted one by one by ctid, as postgres_fdw does
# with a condition it cannot ship)
my $shipped = join "\n", map { slurp_file($shard{$_}->logfile, $logpos{$_}) } @names;
my %direct;
$direct{$1}++
  while $shipped =~ /DELETE FROM public\.fp_b([2-4])_p[0-9]+ WHERE [^\n]*sh OPERATOR\(neardup_internal\.=\) ANY \('\{-?[0-9]+\}'::bigint\[\]\)/g;
my $by_ctid = () = $shipped =~ /DELETE FROM public\.fp_b[0-9]+_p[0-9]+ WHERE ctid = /g;
note "shipped deletes per copy: " . join(' ', map { "$_:" . ($direct{$_} // 0) } 2 .. 4) . "; by ctid: $by_ctid";
ok( !grep({ ($direct{$_} // 0) != 1 } 2 .. 4) && $by_ctid == 0,
	'the other copies\' deletes reach the shards as one DELETE each, by code');
my $deleted = c(
	"SELECT simhash_layout_delete('fp', (SELECT array_agg(id) FROM fp_one WHERE id % 97 = 5))"
);
c('DELETE FROM fp_one WHERE id % 97 = 5');
# near copies of existing rows (2 bits flipped), new ids
c(  "CREATE TABLE fp_new AS
	  SELECT id + $rows AS id, nd_flip(sh, 2, (id % 64)::int) AS sh FROM fp_one WHERE id % 41 = 7;
	INSERT INTO fp_one SELECT * FROM fp_new;");
my $added =
  c("SELECT simhash_layout_insert('fp', 'SELECT id, sh FROM fp_new')");
$want = c('SELECT count(*) FROM fp_one');
my $got = copy_counts('fp');
note "deleted $deleted, inserted $added; copies $got, single node $want";
ok( $deleted > 0 && $added > 0 && $got eq "$want $want $want $want",
	'deletes and inserts through the coordinator reach every copy');
my $checked = c(
	q{SELECT string_agg(block || ':' || row_count || ':' || consistent, ' ' ORDER BY block)
	FROM simhash_layout_check('fp')});
$plan = c(
	'EXPLAIN VERBOSE SELECT count(*), sum(hashint8(id)) FROM fp_b2_p0
	UNION ALL SELECT count(*), sum(hashint8(id)) FROM fp_b2_p1');
# a row written on a shard behind the coordinator's back: copy 2 differs
my $stray = nd_server_of($coord, 'fp_b2_p0');
on($stray, "INSERT INTO fp_b2_p0 VALUES (-7, '0000000000000001')");
my $broken = c(
	q{SELECT string_agg(block || ':' || consistent, ' ' ORDER BY block)
	FROM simhash_layout_check('fp')});
on($stray, 'DELETE FROM fp_b2_p0 WHERE id = -7');
note "simhash_layout_check: $checked; with a stray row in copy 2: $broken";
note((grep { /Remote SQL/ } split /\n/, $plan)[0]);
ok( $checked eq "1:$want:true 2:$want:true 3:$want:true 4:$want:true"
	  && $broken eq '1:true 2:false 3:true 4:true'
	  && nd_lines(
		$plan,
		qr/Remote SQL: SELECT count\(\*\), sum\(hashint8\(id\)\) FROM public\.fp_b2_p/
	  ) == 2,
	'simhash_layout_check: every copy consistent, aggregated on the shards; a stray row makes its copy differ'
);
$out = c('SELECT nd_blocks_radius_check(3)');
note $out;
like(
	$out,
	qr/mismatches=0 rows=[1-9]/,
	'after the writes: radius 0..3 equal to the single node');
$out = c('SELECT nd_blocks_clusters_check()');
note $out;
like(
	$out,
	qr/^missing=0 extra=0 rows=[1-9]/,
	'after the writes: clusters equal to the single node');

# --- adding a shard: moving a partition ---
my $before = c('SELECT count(*) FROM fp_b1_p0');
my $from = nd_server_of($coord, 'fp_b1_p0');
my $moved = c("CALL simhash_layout_move_partition('fp', 1, 0, 's5')");
my $on_new = on('s5', 'SELECT count(*) FROM fp_b1_p0');
my $on_old = on($from, 'SELECT count(*) FROM fp_b1_p0');
my $now = nd_server_of($coord, 'fp_b1_p0');
note "partition 0 of block 1: $before rows on $from; moved $moved; "
  . "now on $now: $on_new rows there, $on_old left on $from";
ok( $before > 0
	  && $moved == $before
	  && $on_new == $before
	  && $on_old == 0
	  && $now eq 's5'
	  && copy_counts('fp') eq "$want $want $want $want",
	'simhash_layout_move_partition: the rows go to the new shard, the coordinator reads them there, the old table is emptied'
);
# a move onto a shard whose table is not empty is refused (a stray row there)
my $to = nd_server_of($coord, 'fp_b3_p0');
my $other = $to eq 's1' ? 's2' : 's1';
on($other, "INSERT INTO fp_b3_p0 VALUES (-1, '0000000000000000')");
my $refused =
  nd_error($coord,
	"CALL simhash_layout_move_partition('fp', 3, 0, '$other')");
on($other, 'DELETE FROM fp_b3_p0 WHERE id = -1');
note
  "moving block 3's partition 0 from $to onto $other, whose table has a row: $refused";
ok( $refused =~
	  /ERROR: +55000: table public\.fp_b3_p0 on server "$other" is not empty/
	  && nd_server_of($coord, 'fp_b3_p0') eq $to,
	'a move onto a table that is not empty is refused (55000) and changes nothing'
);
$out = c('SELECT nd_blocks_radius_check(3)');
my $knn = c('SELECT nd_blocks_knn_check()');
my $clu = c('SELECT nd_blocks_clusters_check()');
note "after the move: $out; $knn; $clu";
ok( $out =~ /mismatches=0 rows=[1-9]/
	  && $knn =~ /mismatches=0/
	  && $clu =~ /^missing=0 extra=0/,
	'after the move: radius, KNN and clusters equal to the single node');

# --- the constraint across shards ---
c(  "SELECT count(*) FROM simhash_layout_create('fx', ARRAY['s1','s2','s3','s4'], 4, 4)"
);
c(  q{SELECT simhash_layout_insert('fx',
	'SELECT i, (''x'' || md5(''fx'' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 2000) i')}
);
$before = copy_counts('fx');
# 64 near copies of existing rows, one at a time: 1 to 3 bits flipped, in
# every block; each must be refused (23P01), whatever block they share.
$out = nd_sql(
	$coord, q{DO $$
DECLARE
    refused int := 0;
    near simhash64;
BEGIN
    FOR j IN 0 .. 63 LOOP
        SELECT (sh::bigint # (1::bigint << j)
                # CASE WHEN j % 3 > 0 THEN 1::bigint << ((j + 17) % 64) ELSE 0 END
                # CASE WHEN j % 3 > 1 THEN 1::bigint << ((j + 40) % 64) ELSE 0 END)::simhash64
        INTO near FROM fx WHERE id = 1 + j * 31;
        BEGIN
            PERFORM simhash_layout_insert('fx', format('SELECT %s::bigint, %L::simhash64', 100000 + j, near));
        EXCEPTION WHEN exclusion_violation THEN
            refused := refused + 1;
        END;
    END LOOP;
    RAISE NOTICE 'refused=%', refused;
END
$$});
my ($refusals) = $out =~ /(refused=[0-9]+)/;
$refusals //= $out;
my $pair = nd_error(
	$coord,
	q{SELECT simhash_layout_insert('fx',
	'SELECT 200001::bigint, ''0123456789abcdef''::simhash64 UNION ALL SELECT 200002, ''0123456789abcdee''')}
);
my $far = c(
	q{SELECT simhash_layout_insert('fx', 'SELECT 300001::bigint, ''fedcba9876543210''::simhash64')}
);
my $after = copy_counts('fx');
note "near copies refused: $refusals of 64; two new rows 1 bit apart: $pair; "
  . "a far row: $far; copies $before -> $after";
ok( $refusals eq 'refused=64'
	  && $pair =~ /conflicting key value violates exclusion constraint/
	  && $far eq '1'
	  && $after eq '2001 2001 2001 2001'
	  && $before eq '2000 2000 2000 2000',
	'the partitions\' constraints hold for the whole layout: every near copy refused, in any block, and nothing left in any copy'
);

# Two transactions insert near copies at once: the second meets the first's
# uncommitted row on the shard where the copies meet, waits there, and is
# refused when the first commits.
my $first = $coord->background_psql('postgres');
$first->query_safe(
	q{BEGIN;
	SELECT simhash_layout_insert('fx', 'SELECT 400001::bigint, ''a5a5a5a5a5a5a5a5''::simhash64');}
);
my $second = $coord->background_psql('postgres', on_error_stop => 0);
$second->query_until(
	qr/inserting/, q{\echo inserting
	SELECT simhash_layout_insert('fx', 'SELECT 400002::bigint, ''a5a5a5a5a5a5a5a4''::simhash64');
});
my $waits = 0;
for (
	my $i = 0;
	!$waits && $i < 10 * $PostgreSQL::Test::Utils::timeout_default;
	$i++)
{
	usleep(100_000);
	$waits = grep {
		on( $_,
			q{SELECT count(*) FROM pg_stat_activity
			WHERE application_name = 'postgres_fdw' AND wait_event_type = 'Lock'}) > 0
	} @names;
}
$first->query_safe('COMMIT');
$first->quit;
$second->query('SELECT 1');
my $second_err = $second->{stderr};
$second->quit;
my $kept = c(
	'SELECT string_agg(id::text, \',\' ORDER BY id) FROM fx_b4 WHERE id IN (400001, 400002)'
);
note "concurrent near copies: the second waited on a shard: "
  . ($waits ? 'yes' : 'no')
  . '; it got: '
  . (split /\n/, $second_err)[0]
  . "; rows kept: $kept";
ok( $waits && $second_err =~ /exclusion constraint/ && $kept eq '400001',
	'two concurrent transactions inserting near copies: the second waits, and is refused once the first commits'
);

# Deletes on the constraint's layout, whose copies all keep their key: the
# same rows go from every copy, and a near copy of a deleted row is then
# accepted.
my $fx_deleted = c(
	q{SELECT simhash_layout_delete('fx', ARRAY(SELECT id FROM fx WHERE id % 10 = 3 OR id = 400001))});
my $fx_counts = copy_counts('fx');
my $fx_check = c(
	q{SELECT string_agg(consistent::text, ' ' ORDER BY block) FROM simhash_layout_check('fx')});
my $fx_again =
  c(q{SELECT simhash_layout_insert('fx', 'SELECT 400002::bigint, ''a5a5a5a5a5a5a5a4''::simhash64')});
note "constraint layout: deleted $fx_deleted; copies $fx_counts; consistent: $fx_check; the near copy inserted: $fx_again";
ok( $fx_deleted == 201
	  && $fx_counts eq '1801 1801 1801 1801'
	  && $fx_check eq 'true true true true'
	  && $fx_again eq '1',
	'the constraint layout (keys on every copy): a delete reaches every copy, and frees the deleted code for a near copy'
);

# --- failures ---
$shard{s3}->stop('immediate');
$out = nd_sql(
	$coord,
	q{SELECT count(*) FROM simhash_layout_nearest('fp',
	  ('x' || md5('absent1'))::bit(64)::bigint::simhash64, 10)});
note 's3 stopped: ' . (split /\n/, $out)[0];
like(
	$out,
	qr/ERROR: .*"s3"/,
	'a stopped shard: the query fails with an error that names its server');
# the error as psql shows it by default: the message, a DETAIL naming the
# layout and the server, and a context of a few lines, not the generated
# query (one subquery per partition)
my ($rc_within, $within_err) = nd_sql($coord,
	q{SELECT count(*) FROM simhash_layout_within('fp',
	  ('x' || md5('absent1'))::bit(64)::bigint::simhash64, 3)});
note "the error of a search with s3 stopped:\n$within_err";
ok( $within_err =~ /ERROR: .*"s3"/
	  && $within_err =~ /DETAIL: .*Layout (public\.)?fp: server s3\./s
	  && $within_err !~ /UNION ALL/
	  && length($within_err) < 1000,
	'a stopped shard: the error names the layout and the server, with a short context ('
	  . length($within_err)
	  . ' bytes)');
# a radius-0 query reads one partition of copy 1: one whose server is not s3
my $code = c(
	q{SELECT q FROM (SELECT sh AS q FROM fp_one ORDER BY id LIMIT 200) c
	  JOIN pg_foreign_table f ON f.ftrelid::regclass::text =
	       substring(simhash_layout_within_sql('fp', q, 0) FROM 'FROM public\.(fp_b1_p[0-9]+)')
	  JOIN pg_foreign_server s ON s.oid = f.ftserver
	WHERE s.srvname <> 's3' LIMIT 1});
$got = nd_sql($coord,
	"SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM simhash_layout_within('fp', '$code', 0)"
);
$want = c(
	"SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM fp_one WHERE sh = '$code'"
);
note "with s3 stopped, radius 0 around $code (a partition elsewhere): "
  . substr($got, 0, 60)
  . ' (single node: '
  . substr($want, 0, 60) . ')';
ok( $code ne '' && $want ne '' && $got eq $want,
	'with a shard stopped, a query whose partitions are elsewhere still answers'
);
$shard{s3}->start;

# s2 fails over to its standby: promote it, point the server there.
$shard{s2}->wait_for_catchup($s2r);
$shard{s2}->stop('immediate');
$s2r->promote;
c(  sprintf(
		"ALTER SERVER s2 OPTIONS (SET host '%s', SET port '%s');
		SELECT postgres_fdw_disconnect_all();", $s2r->host, $s2r->port));
$out = c('SELECT nd_blocks_radius_check(3)');
$knn = c('SELECT nd_blocks_knn_check()');
note "s2 promoted: $out; $knn";
ok( $out =~ /mismatches=0 rows=[1-9]/ && $knn =~ /mismatches=0/,
	"s2's standby promoted and the server repointed: radius and KNN equal to the single node"
);
$added = c(
	"SELECT simhash_layout_insert('fp', 'SELECT id + 1000000, sh FROM fp_new')"
);
c('INSERT INTO fp_one SELECT id + 1000000, sh FROM fp_new');
$want = c('SELECT count(*) FROM fp_one');
$clu = c('SELECT nd_blocks_clusters_check()');
$got = copy_counts('fp');
note "inserted $added after the failover; copies $got; $clu";
ok( $got eq "$want $want $want $want" && $clu =~ /^missing=0 extra=0/,
	'the promoted shard takes writes: every copy complete, clusters equal to the single node'
);

$_->stop for $coord, $s2r, map { $shard{$_} } qw(s1 s3 s4 s5);
done_testing();
