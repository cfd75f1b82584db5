# Packed copies of the block-sharded layout (doc/scale-out.md, "Packed
# copies"): simhash_shard_create(..., packed => true) on every shard, the
# coordinator's layout unchanged, and every answer equal to the single
# node's while rows sit in the recent tables, in packs, or both.
#
# One coordinator and two shards; layout `fp` (4 blocks, 4 partitions per
# copy; far_searches => false, so that copy 1's index of one table answers
# the radius searches from 4 bits up and the nearest neighbours) and
# `fp_one`, a local table with the same rows.  Checked:
#   - inserts through the coordinator land in the recent tables of copies
#     2 to 4; simhash_shard_merge packs them (every row, none left behind);
#   - radius search at radius 0..5, KNN and the nightly clusters equal the
#     single node's before the merge, after it, and with new rows in the
#     recent tables beside the packs;
#   - a radius-3 query reaches a packed copy as the block ball and the
#     block's value, which the shard answers through the index on v;
#   - merges beside writers: an open insert through the coordinator is
#     neither waited for nor taken; an open delete of packed rows is
#     waited for; nothing is lost either way;
#   - a packed partition moved to the other shard (its old view emptied
#     row by row: TRUNCATE refuses a view) keeps every answer;
#   - deletes through the coordinator (one id, many, ids in no copy, rows
#     in packs and in recent tables) keep the copies consistent
#     (simhash_layout_check), and a one-id delete reaches a packed copy as
#     one statement that the shard answers through the index on v, and a
#     delete of many ids as statements of many block values, which select
#     packs (by the index or a filter on v, as the shard's planner prices
#     them) before any is read;
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NeardupTAP;
use NeardupShards;

my $rows = 20000;
my $parts = 4;
my @names = qw(s1 s2);

my $coord = nd_start_node('coord');
my %shard;
for my $s (@names)
{
	$shard{$s} = nd_start_node($s,
		conf => "log_statement = 'all'\nlog_min_duration_statement = -1\n");
	$shard{$s}->safe_psql(
		'postgres', qq{
		SET client_min_messages = warning;
		CREATE EXTENSION neardup;
		SELECT simhash_shard_create('fp', 4, $parts, packed => true, far_searches => false);
	});
}
nd_coordinator($coord, map { $shard{$_} } @names);

sub c  { return $coord->safe_psql('postgres', $_[0]); }
sub on { return $shard{ $_[0] }->safe_psql('postgres', $_[1]); }

c(  qq{
	CREATE TABLE fp_one (id bigint PRIMARY KEY, sh simhash64 NOT NULL);
	INSERT INTO fp_one SELECT i, nd_row_code(i) FROM generate_series(1, $rows) i
	  WHERE nd_row_code(i) IS NOT NULL;
	SELECT count(*) FROM simhash_layout_create('fp', ARRAY['s1','s2'], 4, $parts);
});
nd_sql_lib($coord, 'shard_blocks.sql');

# the rows of the recent tables and of the packs on both shards
my @packed_parts = map { my $b = $_; map { "fp_b${b}_p$_" } 0 .. $parts - 1 } 2 .. 4;
sub stored
{
	my ($recent, $packed) = (0, 0);
	for my $s (@names)
	{
		my ($r, $p) = split /\|/, on(
			$s,
			'SELECT 0'
			  . join('', map { " + (SELECT count(*) FROM ${_}_recent)" } @packed_parts)
			  . ', 0'
			  . join('', map { " + (SELECT coalesce(sum(octet_length(pack)) / 16, 0) FROM ${_}_packs)" } @packed_parts));
		$recent += $r;
		$packed += $p;
	}
	return ($recent, $packed);
}

# every answer against the single node; $when says when
sub answers
{
	my ($when) = @_;
	my $radius = c('SELECT nd_blocks_radius_check()');
	my $knn = c('SELECT nd_blocks_knn_check()');
	my $clusters = c('SELECT nd_blocks_clusters_check()');
	note "$when: $radius; $knn; $clusters";
	ok( $radius =~ /^checks=[1-9][0-9]* mismatches=0 rows=[1-9]/
		  && $knn =~ /^checks=[1-9][0-9]* mismatches=0 far=[1-9]/
		  && $clusters =~ /^missing=0 extra=0 rows=[1-9]/
		  && c(q{SELECT bool_and(consistent) FROM simhash_layout_check('fp')}) eq 't',
		"$when: radius 0..5, KNN and clusters equal the single node's; copies consistent");
	return;
}

my $inserted = c("SELECT simhash_layout_insert('fp', 'SELECT id, sh FROM fp_one')");
my ($recent, $packed) = stored();
my $want = c('SELECT count(*) FROM fp_one');
ok($inserted == $want && $recent == 3 * $want && $packed == 0,
	"inserts land in the recent tables of copies 2 to 4 ($recent rows for $want)");
answers('rows in the recent tables');

my $moved = 0;
$moved += on($_, q{SELECT sum(moved) FROM simhash_shard_merge('fp')}) for @names;
($recent, $packed) = stored();
ok($moved == 3 * $want && $recent == 0 && $packed == 3 * $want,
	"simhash_shard_merge packs every row ($moved moved; $recent left, $packed packed)");
on($_, 'VACUUM ANALYZE') for @names;
answers('rows in packs');

# new rows beside the packs, with codes near those packed
c(  q{
	INSERT INTO fp_one SELECT 100000 + id, (sh::bigint # 1)::simhash64 FROM fp_one WHERE id % 50 = 1;
	SELECT simhash_layout_insert('fp', 'SELECT id, sh FROM fp_one WHERE id > 100000');
});
answers('rows in packs and in the recent tables');

# --- what a packed copy is sent, and how its shard answers ---
my $q = c('SELECT nd_center(1)');
my $plan = c('EXPLAIN VERBOSE ' . c("SELECT simhash_layout_within_sql('fp', '$q', 3)"));
my ($remote) = $plan =~ /Remote SQL: (SELECT [^\n]*FROM public\.fp_b2_p[0-9]+ [^\n]*)/;
my $splan = '';
for my $s (@names)
{
	my $p = on($s, "EXPLAIN $remote");
	$splan = $p if $p =~ /Index Scan using fp_b2_p[0-9]+_packs_v_idx/;
}
note "copy 2's part of a radius-3 query: $remote\n$splan";
like($splan, qr/Index Scan using fp_b2_p[0-9]+_packs_v_idx.*\n\s*Index Cond: \(v = /,
	'radius 3: the shard finds the packs of the block value through the index on v');

# --- deletes ---
my %logpos = map { $_ => -s $shard{$_}->logfile } @names;
my $one_id = c('SELECT min(id) FROM fp_one WHERE id % 97 = 3');
c("SELECT simhash_layout_delete('fp', ARRAY[$one_id]::bigint[]); DELETE FROM fp_one WHERE id = $one_id");
my $shipped = join "\n", map { slurp_file($shard{$_}->logfile, $logpos{$_}) } @names;
my @deletes = $shipped =~ /(DELETE FROM public\.fp_b[2-4]_p[0-9]+ WHERE [^\n]*)/g;
my $by_index = 0;
for my $d (@deletes)
{
	for my $s (@names)
	{
		my ($rc, $p) = nd_sql($shard{$s}, "EXPLAIN $d");
		$by_index++ if $rc == 0 && $p =~ /Index Scan using fp_b[2-4]_p[0-9]+_packs_v_idx/;
	}
}
note "one id's deletes on the packed copies:\n" . join "\n", @deletes;
ok(@deletes == 3 && $by_index == 3,
	'a one-id delete reaches each packed copy as one statement with the block value, which the shard answers through the index on v');

%logpos = map { $_ => -s $shard{$_}->logfile } @names;
c(  q{
	CREATE TABLE gone AS SELECT id FROM fp_one WHERE id % 13 = 5 OR id > 100000 AND id % 3 = 0;
	SELECT simhash_layout_delete('fp', ARRAY(SELECT id FROM gone) || ARRAY[-1, -2]::bigint[]);
	DELETE FROM fp_one WHERE id IN (SELECT id FROM gone);
});
# each statement of many block values, on the shard that ran it
my ($many, $many_by_index) = (0, 0);
for my $s (@names)
{
	for my $d (slurp_file($shard{$s}->logfile, $logpos{$s}) =~
		/(DELETE FROM public\.fp_b[2-4]_p[0-9]+ WHERE [^\n]*simhash_block\(sh, [2-4], 4\) = ANY \('\{[0-9]+,[0-9,]+\}'[^\n]*)/g)
	{
		$many++;
		$many_by_index++
		  if on($s, "EXPLAIN $d") =~
		  /Scan (using fp_b[2-4]_p[0-9]+_packs_v_idx )?on fp_b[2-4]_p[0-9]+_packs p[^\n]*\n\s*(Index Cond|Filter): \(v = ANY /;
	}
}
ok($many > 0 && $many_by_index == $many,
	"a delete of many ids reaches each packed partition with its block values, which select its packs before they are read ($many_by_index of $many statements)");
answers('after deletes of rows in packs and in the recent tables');
$moved = 0;
$moved += on($_, q{SELECT sum(moved) FROM simhash_shard_merge('fp')}) for @names;
($recent, $packed) = stored();
$want = c('SELECT count(*) FROM fp_one');
ok($recent == 0 && $packed == 3 * $want, "merged again: $packed rows packed for $want");
answers('after the second merge');

# --- merges beside writers ---
# A transaction inserting through the coordinator, still open while both
# shards merge: the merges neither wait for it nor take its rows, which
# are there once it commits.
my $writer = $coord->background_psql('postgres');
$writer->query_safe(
	q{BEGIN;
	INSERT INTO fp_one SELECT 200000 + id, (sh::bigint # 6)::simhash64 FROM fp_one WHERE id % 40 = 7 AND id < 100000;
	SELECT simhash_layout_insert('fp', 'SELECT id, sh FROM fp_one WHERE id > 200000');});
my $merged_beside = 0;
$merged_beside += on($_, q{SELECT sum(moved) FROM simhash_shard_merge('fp')}) for @names;
$writer->query_safe('COMMIT');
$writer->quit;
($recent, $packed) = stored();
$want = c('SELECT count(*) FROM fp_one');
my $new_rows = c('SELECT count(*) FROM fp_one WHERE id > 200000');
ok($merged_beside == 0 && $recent == 3 * $new_rows && $recent + $packed == 3 * $want,
	"merges beside an open insert: nothing of it moved ($merged_beside), its $new_rows rows in every copy once it commits");
answers('after an insert that merges did not wait for');

# A delete through the coordinator, still open, holds rows of packs: a
# merge on the shard waits for it, then packs the recent rows.
my $deleter = $coord->background_psql('postgres');
$deleter->query_safe(
	q{BEGIN;
	SELECT simhash_layout_delete('fp', ARRAY(SELECT id FROM fp_one WHERE id % 29 = 4 AND id < 100000));
	DELETE FROM fp_one WHERE id % 29 = 4 AND id < 100000;});
my $merger = $shard{s1}->background_psql('postgres');
$merger->query_until(qr/merging/, q{\echo merging
	SELECT sum(moved) FROM simhash_shard_merge('fp');
});
my $merge_waits = $shard{s1}->poll_query_until('postgres',
	q{SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%simhash_shard_merge%'});
$deleter->query_safe('COMMIT');
$deleter->quit;
$merger->query_safe('SELECT 1');
$merger->quit;
on('s2', q{SELECT sum(moved) FROM simhash_shard_merge('fp')});
($recent, $packed) = stored();
$want = c('SELECT count(*) FROM fp_one');
ok($merge_waits && $recent == 0 && $packed == 3 * $want,
	"a merge waits for an open delete of packed rows, then packs what is left ($packed rows for $want)");
answers('after a delete that a merge waited for');

# --- two deletes of one pack, and a merge beside a delete, on a shard ---
# A local packed layout `pt` on s1 (no coordinator): two rows of one code
# share a pack.
on('s1', q{
	SET client_min_messages = warning;
	SELECT simhash_shard_create('pt', 4, 1, packed => true);
	INSERT INTO pt_b2_p0 SELECT g, '0123456789abcdef' FROM generate_series(1, 10) g;
	INSERT INTO pt_b2_p0 SELECT 100 + g, ('x' || md5(g::text))::bit(64)::bigint::simhash64 FROM generate_series(1, 200) g;
	SELECT simhash_shard_merge('pt');});
# A (READ COMMITTED) removes row 1 from the pack and waits; B removes row 2
# of the same pack, waits for A's pack, and removes its row once A commits
# (from the pack's new version: one statement's snapshot could not see it).
my $a = $shard{s1}->background_psql('postgres');
$a->query_safe(q{BEGIN; DELETE FROM pt_b2_p0 WHERE id = 1;});
my $b = $shard{s1}->background_psql('postgres');
$b->query_until(qr/deleting/, q{\echo deleting
	DELETE FROM pt_b2_p0 WHERE id = 2;
});
my $b_waits = $shard{s1}->poll_query_until('postgres',
	q{SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%id = 2%'});
$a->query_safe('COMMIT');
$a->quit;
$b->query_safe('SELECT 1');
$b->quit;
my $left = on('s1', q{SELECT string_agg(id::text, ',' ORDER BY id) FROM pt_b2_p0 WHERE id <= 10});
ok($b_waits && $left eq '3,4,5,6,7,8,9,10',
	"two concurrent deletes of rows of one pack (READ COMMITTED): the second waits, then removes its row from the pack's new version (left: $left)");

# A delete holds a recent row; a merge meanwhile moves the others and
# leaves that one (it does not wait for it); the delete then removes a
# packed row too, and commits: no deadlock, nothing lost.
on('s1', q{INSERT INTO pt_b2_p0 SELECT 1000 + g, ('x' || md5((g + 500)::text))::bit(64)::bigint::simhash64 FROM generate_series(1, 100) g});
my $recent_before = on('s1', 'SELECT count(*) FROM pt_b2_p0_recent');
$a = $shard{s1}->background_psql('postgres', on_error_stop => 0);
$a->query_safe(q{BEGIN; DELETE FROM pt_b2_p0 WHERE id = (SELECT min(id) FROM pt_b2_p0_recent);});
my $merged = on('s1', q{SET lock_timeout = '10s'; SELECT sum(moved) FROM simhash_shard_merge('pt')});
$a->query('DELETE FROM pt_b2_p0 WHERE id = 3');
my $a_err = $a->{stderr};
$a->query('COMMIT');
$a->quit;
my $after = on('s1', q{SELECT (SELECT count(*) FROM pt_b2_p0_recent) || ' ' || (SELECT count(*) FROM pt_b2_p0 WHERE id = 3)});
note "merge beside a delete: $recent_before recent rows, $merged moved, then recent and row 3: $after; the delete's errors: $a_err";
ok($merged == $recent_before - 1 && $after eq '0 0' && $a_err eq '',
	'a merge leaves the recent row a delete holds, moves the rest, and the delete then removes a packed row: no deadlock');

# --- a packed partition moves to the other shard ---
my $from = nd_server_of($coord, 'fp_b2_p1');
my $to = $from eq 's1' ? 's2' : 's1';
my $rows_p1 = c('SELECT count(*) FROM fp_b2_p1');
my $moved_rows = c("CALL simhash_layout_move_partition('fp', 2, 1, '$to')");
my $left = on($from, 'SELECT (SELECT count(*) FROM fp_b2_p1_recent) + (SELECT count(*) FROM fp_b2_p1_packs)');
my $there = on($to, 'SELECT count(*) FROM fp_b2_p1');
ok($moved_rows == $rows_p1 && $there == $rows_p1 && $left == 0 && nd_server_of($coord, 'fp_b2_p1') eq $to,
	"simhash_layout_move_partition moves a packed partition ($moved_rows rows to $to) and empties the old one ($left left)");
answers('after the move');

done_testing();
