# GiST, GIN and hamming indexes of simhash64 survive crashes.
#
# One table with four indexes (GIN with fastupdate, so that the pending
# list is in play; hamming with a 64kB pending limit, so that inserts merge
# it into the run again and again, and the crashes hit merges, once with a
# table per block and once of one table, WITH (only_block = 3)), rows
# inserted in batches of 500 by a background session, one transaction per
# batch.  The server is crashed in the middle of the load, twice:
#   1. kill -9 of the postmaster and all its processes (no checkpoint since
#      the indexes were built, so recovery replays the builds too; a pending
#      list limit large enough that GIN keeps every new row in its pending
#      list);
#   2. after a checkpoint, kill -9 of the inserting backend: the postmaster
#      resets every process and recovers (small pending list limit: the list
#      is flushed into the entry tree again and again during the load).
# After each recovery: committed batches are there and in-flight ones are
# not; every query code and radius 0..5, 8, 13 returns through each index
# exactly the rows a sequential scan returns, KNN returns the brute-force
# distances (nd_check in index_check.sql); the same after VACUUM.
# wal_consistency_checking: recovery compares its replay of every generic
# WAL record (hamming) with the page image the record carries.
# amcheck has no GIN or GiST checks in PostgreSQL 15, hence no amcheck here.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NeardupTAP;

my $BATCH = 500;
my $INITIAL = 60000;

my $node = nd_node('main');
# wal_level = replica: the index builds are WAL-logged (minimal, the
# framework's default, would skip that WAL), so that recovery replays them.
# restart_after_crash: the backend kill of part 2 is survived by a reset.
$node->append_conf(
	'postgresql.conf', q{
wal_level = replica
wal_consistency_checking = generic
restart_after_crash = on
});
$node->start;
# pg_ctl waits 60 seconds for a start by default; recovery on a busy machine
# may take longer (this bounds a hang only).
$ENV{PGCTLTIMEOUT} //= $PostgreSQL::Test::Utils::timeout_default;

$node->safe_psql('postgres', 'CREATE EXTENSION neardup');
$node->safe_psql('postgres', 'CREATE EXTENSION pgstattuple');
nd_sql_lib($node, 'index_check.sql');
$node->safe_psql(
	'postgres', qq{
	CREATE TABLE t (id bigint PRIMARY KEY, sh simhash64) WITH (autovacuum_enabled = off);
	INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series(1, $INITIAL) i;
	CREATE INDEX t_gist ON t USING gist (sh);
	CREATE INDEX t_gin ON t USING gin (sh) WITH (fastupdate = on, gin_pending_list_limit = 65536);
	CREATE INDEX t_ham ON t USING hamming (sh) WITH (pending_limit = 64);
	CREATE INDEX t_one ON t USING hamming (sh) WITH (pending_limit = 64, blocks = 4, only_block = 3);
});

my $work = PostgreSQL::Test::Utils::tempdir();

# start_inserter(FIRST_ID): a background psql inserting batches from
# FIRST_ID on, one transaction each (far more than get done before the
# crash), as application_name nd_load.  Returns its IPC::Run harness.
sub start_inserter
{
	my ($first) = @_;
	my $sql = '';
	for my $b (0 .. 399)
	{
		my $lo = $first + $b * $BATCH;
		my $hi = $lo + $BATCH - 1;
		$sql .=
		  "INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series($lo, $hi) i;\n";
	}
	append_to_file("$work/load-$first.sql", $sql);
	my ($out, $err) = ('', '');
	return IPC::Run::start(
		[
			$node->installed_command('psql'), '-X', '-q', '-At',
			'-v', 'ON_ERROR_STOP=1',
			'-d', $node->connstr('postgres') . ' application_name=nd_load',
			'-f', "$work/load-$first.sql"
		],
		'>', \$out, '2>', \$err);
}

# stop_inserter(HARNESS): waits for the inserting psql; its exit code.
sub stop_inserter
{
	my ($h) = @_;
	$h->finish;
	return $h->result(0);
}

sub count_rows
{
	return $node->safe_psql('postgres', 'SELECT count(*) FROM t');
}

# A process that exists and is not a zombie (a killed server process may
# stay a zombie here: its new parent need not reap it).
sub alive
{
	my ($pid) = @_;
	return 0 unless -e "/proc/$pid";
	my $status = eval { slurp_file("/proc/$pid/status") } // '';
	return $status !~ /^State:\s*Z/m;
}

# Server log lines written from OFFSET on.
sub log_from
{
	my ($offset) = @_;
	return slurp_file($node->logfile, $offset);
}

sub note_lines
{
	my ($log, $re) = @_;
	note(substr($_, 0, 120)) for ($log =~ /($re.*)$/mg);
	return;
}

# The rows a recovered table must hold: whole batches, ids 1..count, each
# with its own code; at least what was committed before the crash.
sub check_rows
{
	my ($before, $label) = @_;
	my ($cnt, $maxid, $wrong) = split /\|/, $node->safe_psql(
		'postgres', q{
		SELECT count(*), coalesce(max(id), 0),
		  count(*) FILTER (WHERE sh IS DISTINCT FROM nd_row_code(id)) FROM t});
	note("rows: $cnt (committed before the crash: $before), max id $maxid, "
		  . "rows with a wrong code: $wrong");
	ok( $cnt >= $before
		  && $cnt == $maxid
		  && ($cnt - $INITIAL) % $BATCH == 0
		  && $wrong == 0,
		"$label: every batch committed before the crash is there, no partial batch"
	);
	return;
}

sub gin_pending
{
	return $node->safe_psql('postgres',
		q{SELECT pending_pages || ' pages, ' || pending_tuples || ' tuples'
		  FROM pgstatginindex('t_gin')});
}

# nd_check_ok(DESCRIPTION, INDEX, OTHER_INDEXES): nd_check(t, INDEX) finds
# no mismatch and no plan that does not use INDEX, with OTHER_INDEXES
# dropped in a transaction that is rolled back (so that the planner cannot
# choose them instead), also for the codes of the last rows inserted.
sub nd_check_ok
{
	my ($desc, $idx, $other) = @_;
	my ($rc, $out, $err) = $node->psql(
		'postgres', qq{
		BEGIN;
		DROP INDEX $other;
		SELECT nd_check('t', '$idx',
		  nd_query_codes() || ARRAY(SELECT sh FROM t ORDER BY id DESC LIMIT 5));
		ROLLBACK;
	});
	$out = "$out$err";
	note("$idx: " . (split / \|/, $out)[0]);
	my $pass = $out =~ /^checks=[1-9][0-9]* mismatches=0 wrong_plans=0$/;
	diag(substr($out, 0, 4000)) unless $pass;
	ok($pass, $desc);
	return;
}

sub check_indexes
{
	my ($label) = @_;
	nd_check_ok("$label: GiST index scans = sequential scan (radius, =, KNN)",
		't_gist', 't_gin, t_ham, t_one');
	nd_check_ok("$label: GIN index scans = sequential scan (radius, =)",
		't_gin', 't_gist, t_ham, t_one');
	nd_check_ok(
		"$label: hamming index scans = sequential scan (radius, =, block balls, KNN)",
		't_ham', 't_gist, t_gin, t_one');
	nd_check_ok(
		"$label: hamming index of one table = sequential scan (radius, =, block balls, KNN)",
		't_one', 't_gist, t_gin, t_ham');
	for my $idx (qw(t_ham t_one))
	{
		my ($rc, $out, $err) = $node->psql('postgres',
			"SELECT 'passed' FROM hamming_check('$idx', true)");
		is("$out$err", 'passed', "$label: hamming_check('$idx', heapallindexed)");
	}
	return;
}

# --- 1. kill -9 of the postmaster and all its children ---------------------
my $inserter = start_inserter($INITIAL + 1);
$node->poll_query_until('postgres',
	'SELECT count(*) >= ' . ($INITIAL + 20 * $BATCH) . ' FROM t')
  or note('the load did not progress');
my $before = count_rows();
my $pm = (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
my @kids = split ' ', `pgrep -P $pm`;
$node->kill9;
kill 'KILL', @kids;
for my $pid ($pm, @kids)
{
	my $tries = 0;
	while (alive($pid))
	{
		die "process $pid survived kill -9"
		  if ++$tries > 10 * $PostgreSQL::Test::Utils::timeout_default;
		select undef, undef, undef, 0.1;
	}
}
# As a reboot would: a zombie postmaster's pid still answers kill(pid, 0),
# and the lock files naming it would stop the new postmaster.
unlink($node->data_dir . '/postmaster.pid',
	$node->host . '/.s.PGSQL.' . $node->port . '.lock');
my $rc = stop_inserter($inserter);
note("killed the postmaster ($pm) and "
	  . scalar(@kids)
	  . " processes with $before rows committed; the inserting psql exited with $rc"
);
ok($rc != 0, 'crash 1: the load was interrupted');
my $offset = -s $node->logfile;
$node->start;
my $log = log_from($offset);
note_lines($log, qr/(?:redo (?:starts|done) at|checkpoint complete)/);
like($log, qr/redo starts at/, 'crash 1: the server restarted and replayed WAL');
check_rows($before, 'crash 1');
my $p = gin_pending();
note("GIN pending list after recovery: $p");
isnt($p, '0 pages, 0 tuples',
	'crash 1: GIN rows inserted before the crash are in the recovered pending list'
);
check_indexes('crash 1');
$node->safe_psql('postgres', 'VACUUM t');
$p = gin_pending();
note("GIN pending list after VACUUM: $p");
is($p, '0 pages, 0 tuples', 'crash 1: VACUUM emptied the pending list');
check_indexes('crash 1, after VACUUM');

# --- 2. kill -9 of the inserting backend --------------------------------------
$node->safe_psql('postgres',
	'ALTER INDEX t_gin SET (gin_pending_list_limit = 128); CHECKPOINT');
my $start = count_rows();
$inserter = start_inserter($start + 1);
$node->poll_query_until('postgres',
	'SELECT count(*) >= ' . ($start + 20 * $BATCH) . ' FROM t')
  or note('the load did not progress');
my $backend = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE application_name = 'nd_load'");
$before = count_rows();
$offset = -s $node->logfile;
kill 'KILL', $backend;
$rc = stop_inserter($inserter);
note("killed backend $backend with $before rows committed; "
	  . "the inserting psql exited with $rc");
ok($rc != 0, 'crash 2: the load was interrupted');
# Until the postmaster has reset everything and is ready again.
$node->wait_for_log(qr/reinitializing.*ready to accept connections/s,
	$offset);
$node->poll_query_until('postgres', 'SELECT 1', '1');
$log = log_from($offset);
note_lines($log, qr/(?:terminated by signal|redo (?:starts|done) at)/);
ok( $log =~ /terminated by signal 9/ && $log =~ /redo starts at/,
	'crash 2: the postmaster reset all processes and replayed WAL');
check_rows($before, 'crash 2');
note('GIN pending list after recovery: ' . gin_pending());
check_indexes('crash 2');
$node->safe_psql('postgres', 'VACUUM t');
check_indexes('crash 2, after VACUUM');

# The recovered indexes take new rows.
$node->safe_psql('postgres',
	"INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series("
	  . "(SELECT max(id) + 1 FROM t), (SELECT max(id) + $BATCH FROM t)) i");
check_indexes('after more inserts');

unlike(
	slurp_file($node->logfile),
	qr/inconsistent page found/,
	'no replay of a generic WAL record differed from its page image');

$node->stop;
done_testing();
