# Moving a partition of the block-sharded layout to another shard when a
# commit fails (doc/scale-out.md, "Adding a shard: moving a partition").
# postgres_fdw commits the shards one after another, without two-phase
# commit: a move must leave a correct layout whichever commit fails, and a
# rerun must finish it.
#
# A coordinator and four shards: layout `mv` (4 blocks, 4 partitions per
# copy) on s1 and s2, s3 and s4 the new shards, `mv_one` a local table on
# the coordinator holding the same rows (the single-node reference).  A
# failed commit is provoked by a deferred constraint trigger on the target
# shard's table that raises at commit (a stand-in for a lost connection, a
# full disk or a failed deferred check).  Checked:
#   - simhash_layout_move (one transaction) refuses (0A000), and no row is
#     lost: a copy and an emptying in one transaction lose the rows when
#     the target refuses its commit after the source's has committed;
#   - simhash_layout_move_partition with the target failing at commit: the
#     coordinator still reads the old shard, every row there;
#   - the same with the old shard failing to empty (a TRUNCATE trigger):
#     the coordinator reads the new shard, every row there, writes to the
#     copy refused until a rerun, which finishes the move;
#   - a rerun after the target committed but the coordinator's switch did
#     not (the target already holds exactly these rows) finishes the move;
#     a target holding other rows is refused (55000);
#   - after every step, every copy holds every row of the single node,
#     simhash_layout_check calls every copy consistent, and radius searches
#     equal the single node's.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NeardupTAP;
use NeardupShards;

my $rows = 4000;

my $coord = nd_start_node('coord');
my %shard;
for my $s (qw(s1 s2 s3 s4))
{
	$shard{$s} = nd_start_node($s);
	$shard{$s}->safe_psql(
		'postgres', q{
		SET client_min_messages = warning;
		CREATE EXTENSION neardup;
		SELECT simhash_shard_create('mv', 4, 4);
		-- a refusal at commit, armed per table by the test
		CREATE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS
		  $$BEGIN RAISE EXCEPTION 'refused at commit on %', TG_TABLE_NAME; END$$;
		CREATE FUNCTION refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS
		  $$BEGIN RAISE EXCEPTION 'truncate refused on %', TG_TABLE_NAME; END$$;
	});
}
nd_coordinator($coord, map { $shard{$_} } qw(s1 s2 s3 s4));

sub c { return $coord->safe_psql('postgres', $_[0]); }

sub shard_count
{
	my ($s, $table) = @_;
	return $shard{$s}->safe_psql('postgres', "SELECT count(*) FROM $table");
}

c(  qq{
	CREATE TABLE mv_one (id bigint PRIMARY KEY, sh simhash64 NOT NULL);
	INSERT INTO mv_one SELECT i, nd_row_code(i) FROM generate_series(1, $rows) i
	  WHERE nd_row_code(i) IS NOT NULL;
	SELECT count(*) FROM simhash_layout_create('mv', ARRAY['s1','s2'], 4, 4);
	SELECT simhash_layout_insert('mv', 'SELECT id, sh FROM mv_one');
});
my $want = c('SELECT count(*) FROM mv_one');

# The layout against the single node: "rows=<copy 1 .. copy 4> lost=<rows
# of mv_one missing from some copy, or with another code> extra=<rows of
# some copy not in mv_one> check=<simhash_layout_check's consistent, per
# copy> radius=<radius 0..2 searches around 60 codes that differ from a
# scan of mv_one>".
c(  q{
CREATE FUNCTION mv_state() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    counts text[] := '{}';
    lost bigint := 0;
    extra bigint := 0;
    n bigint;
    chk text;
    bad int := 0;
BEGIN
    FOR b IN 1 .. 4 LOOP
        EXECUTE format('SELECT count(*) FROM mv_b%s', b) INTO n;
        counts := counts || n::text;
        EXECUTE format('SELECT count(*) FROM mv_one o WHERE NOT EXISTS
                            (SELECT FROM mv_b%s c WHERE c.id = o.id AND c.sh = o.sh)', b) INTO n;
        lost := lost + n;
        EXECUTE format('SELECT count(*) FROM mv_b%s c WHERE NOT EXISTS
                            (SELECT FROM mv_one o WHERE c.id = o.id AND c.sh = o.sh)', b) INTO n;
        extra := extra + n;
    END LOOP;
    SELECT string_agg(consistent::text, ' ' ORDER BY block) INTO chk FROM simhash_layout_check('mv');
    SELECT count(*) INTO bad
    FROM (SELECT sh AS q FROM mv_one ORDER BY id LIMIT 60) c, generate_series(0, 2) r
    WHERE (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM simhash_layout_within('mv', c.q, r))
          <> (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM mv_one o
              WHERE bit_count((o.sh::bigint # c.q::bigint)::bit(64)) <= r);
    RETURN format('rows=%s lost=%s extra=%s check=%s radius=%s', array_to_string(counts, ' '), lost, extra, chk, bad);
END
$$;
CREATE FUNCTION mv_server(part text) RETURNS text LANGUAGE sql AS $$
    SELECT s.srvname::text FROM pg_foreign_table f JOIN pg_foreign_server s ON s.oid = f.ftserver
    WHERE f.ftrelid = part::regclass
$$;
});
my $good =
  "rows=$want $want $want $want lost=0 extra=0 check=true true true true radius=0";

my $state = c('SELECT mv_state()');
note "the layout on s1 and s2: $state";
ok($want > 0 && $state eq $good,
	'the layout holds every row in each copy, equal to the single node');

# --- the function of one transaction, with the target refusing its commit ---
# Copy 1's partitions: 0 and 2 on s1, 1 and 3 on s2; each moved to s3 or
# s4, whose tables refuse at commit.
for my $s (qw(s3 s4))
{
	$shard{$s}->safe_psql('postgres',
			"CREATE CONSTRAINT TRIGGER refuse AFTER INSERT ON mv_b1_p$_"
		  . ' DEFERRABLE INITIALLY DEFERRED'
		  . ' FOR EACH ROW EXECUTE FUNCTION refuse_commit()')
	  for 0 .. 3;
}
my $placement = q{SELECT string_agg(mv_server('mv_b1_p' || p), ' ' ORDER BY p)
	FROM generate_series(0, 3) p};
my $before = c($placement);
my @outcomes;
for my $mv ([ 0, 's3' ], [ 1, 's3' ], [ 2, 's4' ], [ 3, 's4' ])
{
	my $err =
	  nd_error($coord,
		"SELECT simhash_layout_move('mv', 1, $mv->[0], '$mv->[1]')");
	push @outcomes, $err =~ /ERROR: +([0-9A-Z]{5})/ ? $1 : 'none';
}
my $after = c($placement);
$state = c('SELECT mv_state()');
note "simhash_layout_move of copy 1's four partitions onto s3 and s4: "
  . "@outcomes; placement $before -> $after; $state";
ok( $state eq $good && $after eq $before,
	'simhash_layout_move with the target failing at commit: no row lost, '
	  . "the coordinator's placement unchanged");
is( "@outcomes",
	'0A000 0A000 0A000 0A000',
	'simhash_layout_move refuses to move in one transaction (0A000)');

# --- the procedure, the target refusing its commit ---
my $old = c("SELECT mv_server('mv_b1_p0')");
my $err =
  nd_error($coord, "CALL simhash_layout_move_partition('mv', 1, 0, 's3')");
$state = c('SELECT mv_state()');
note "CALL simhash_layout_move_partition('mv', 1, 0, 's3'), "
  . "s3 refusing at commit: $err; $state";
ok( $err =~ /refused at commit/
	  && $state eq $good
	  && c("SELECT mv_server('mv_b1_p0')") eq $old
	  && shard_count($old, 'mv_b1_p0') > 0
	  && shard_count('s3', 'mv_b1_p0') == 0
	  && c("SELECT count(*) FROM pg_class WHERE relname LIKE 'mv_b1_p0_mov%'")
	  == 0,
	'the target failing at commit: nothing moved, the coordinator reads '
	  . 'the old shard, which holds every row');
for my $s (qw(s3 s4))
{
	$shard{$s}->safe_psql('postgres', "DROP TRIGGER refuse ON mv_b1_p$_")
	  for 0 .. 3;
}

# --- the procedure, the old shard failing to empty its table ---
my $moved_rows = shard_count($old, 'mv_b1_p0');
$shard{$old}->safe_psql('postgres',
		'CREATE TRIGGER refuse BEFORE TRUNCATE ON mv_b1_p0'
	  . ' FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate()');
$err =
  nd_error($coord, "CALL simhash_layout_move_partition('mv', 1, 0, 's3')");
$state = c('SELECT mv_state()');
my $half =
  c("SELECT mv_server('mv_b1_p0') || ' ' || mv_server('mv_b1_p0_moved_from')")
  . ' '
  . shard_count('s3', 'mv_b1_p0') . ' '
  . shard_count($old, 'mv_b1_p0');
note "the same, $old refusing the TRUNCATE: $err; "
  . "now on, moved from, rows there, rows left: $half; $state";
ok( $err =~ /truncate refused/
	  && $state eq $good
	  && $half eq "s3 $old $moved_rows $moved_rows",
	'the old shard failing to empty: the coordinator reads the new shard, '
	  . 'every row there, the old table kept and marked');

# half-done: writes to copy 1 are refused (they would make the tables differ)
my $code = c('SELECT sh FROM mv_b1_p0 ORDER BY id LIMIT 1');
my $ins = nd_error($coord,
	"SELECT simhash_layout_insert('mv', 'SELECT 900001::bigint, ''$code''::simhash64')"
);
my $del =
  nd_error($coord, "SELECT simhash_layout_delete('mv', ARRAY[1]::bigint[])");
$state = c('SELECT mv_state()');
note "half-done, an insert into the partition: $ins; a delete: $del; $state";
ok( $ins =~ /does not allow inserts/
	  && $del =~ /does not allow deletes/
	  && $state eq $good,
	'half-done: writes to the copy are refused, nothing changes');

$shard{$old}->safe_psql('postgres', 'DROP TRIGGER refuse ON mv_b1_p0');
my $moved = c("CALL simhash_layout_move_partition('mv', 1, 0, 's3')");
$state = c('SELECT mv_state()');
my $done = c(
	q{SELECT mv_server('mv_b1_p0') || ' ' || count(*) FROM pg_class
	WHERE relname = 'mv_b1_p0_moved_from'});
note "the rerun: moved $moved; now on, marks left: $done; rows there "
  . shard_count('s3', 'mv_b1_p0')
  . ", left on $old "
  . shard_count($old, 'mv_b1_p0')
  . "; $state";
ok( $moved == $moved_rows
	  && $done eq 's3 0'
	  && shard_count($old, 'mv_b1_p0') == 0
	  && shard_count('s3', 'mv_b1_p0') == $moved_rows
	  && $state eq $good,
	'a rerun finishes the move: the old table emptied after the check, '
	  . 'the mark dropped');

c(  qq{
	SELECT simhash_layout_insert('mv', 'SELECT 900001::bigint, ''$code''::simhash64');
	INSERT INTO mv_one VALUES (900001, '$code');
});
$want++;
$good =
  "rows=$want $want $want $want lost=0 extra=0 check=true true true true radius=0";
$state = c('SELECT mv_state()');
my $again = c("CALL simhash_layout_move_partition('mv', 1, 0, 's3')");
note "after the move, an insert into that partition: $state; "
  . "the move again: $again";
ok( $state eq $good
	  && shard_count('s3', 'mv_b1_p0') == $moved_rows + 1
	  && $again eq '0',
	'after the move the copy takes writes on the new shard; '
	  . 'moving it again to the same server does nothing');

# --- a rerun after the target committed but the switch did not ---
# The target already holds exactly the partition's rows (as when the
# coordinator's own commit failed after the shards'): the rerun keeps them.
$old = c("SELECT mv_server('mv_b2_p1')");
$moved_rows = shard_count($old, 'mv_b2_p1');
c(  q{
	CREATE FOREIGN TABLE mv_pre (id bigint, sh simhash64)
	  SERVER s4 OPTIONS (table_name 'mv_b2_p1');
	INSERT INTO mv_pre SELECT id, sh FROM mv_b2_p1;
	DROP FOREIGN TABLE mv_pre;
});
$moved = c("CALL simhash_layout_move_partition('mv', 2, 1, 's4')");
$state = c('SELECT mv_state()');
note "block 2's partition 1, already on s4: moved $moved of $moved_rows; "
  . 'on s4 '
  . shard_count('s4', 'mv_b2_p1')
  . ", left on $old "
  . shard_count($old, 'mv_b2_p1')
  . "; $state";
ok( $moved == $moved_rows
	  && shard_count('s4', 'mv_b2_p1') == $moved_rows
	  && shard_count($old, 'mv_b2_p1') == 0
	  && c("SELECT mv_server('mv_b2_p1')") eq 's4'
	  && $state eq $good,
	'a rerun after the target committed the rows but the switch did not: '
	  . 'the rows kept, the move finished');

# a target holding other rows: refused, nothing changed
$shard{s3}->safe_psql('postgres',
	"INSERT INTO mv_b3_p0 VALUES (-1, '0000000000000000')");
$old = c("SELECT mv_server('mv_b3_p0')");
$err =
  nd_error($coord, "CALL simhash_layout_move_partition('mv', 3, 0, 's3')");
$shard{s3}->safe_psql('postgres', 'DELETE FROM mv_b3_p0 WHERE id = -1');
$state = c('SELECT mv_state()');
note
  "block 3's partition 0 onto s3, whose table has another row: $err; $state";
ok( $err =~
	  /ERROR: +55000: table public\.mv_b3_p0 on server "s3" is not empty/
	  && c("SELECT mv_server('mv_b3_p0')") eq $old
	  && $state eq $good,
	'a target holding other rows is refused (55000) and nothing changes');

$_->stop for $coord, values %shard;
done_testing();
