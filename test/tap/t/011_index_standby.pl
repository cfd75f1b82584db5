# GiST, GIN and hamming indexes of simhash64 on a streaming hot standby.
#
# The standby is made from a base backup of the primary.  The primary then
# changes indexes that the backup holds (inserts: GiST page splits, GIN
# pending list, flushed into the entry tree again and again at its 256 kB
# limit, hamming merges; deletes, updates) and builds new ones (CREATE
# INDEX WAL); after replay, on the standby, every query code and radius
# returns through each index what a sequential scan on the standby returns,
# and KNN the brute-force distances (nd_check in index_check.sql; hamming
# indexes also their block balls), for hamming indexes of a table per block
# and of one table (WITH (only_block = b): ro's is in the base backup and
# the standby replays its merges, so's is built later and the standby
# replays its build).  Again
# after VACUUM (GIN pending list flushed into the entry tree, GiST vacuum)
# and REINDEX CONCURRENTLY on the primary.  Then hamming_check on the
# standby while merges and VACUUM are replayed under it.
# wal_consistency_checking: every generic WAL record (hamming, whose list
# appends write their records themselves) carries a page image that the
# standby compares with its replay of the record; a difference stops it,
# and its log says so.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NeardupTAP;

my @tables = qw(rg rn rh ro sg sn sh so);

my $primary = nd_node('primary', allows_streaming => 1);
# The framework gives streaming nodes 1MB of shared buffers; the server's
# default is what the loads here are sized for.
$primary->append_conf(
	'postgresql.conf', q{
shared_buffers = 128MB
wal_consistency_checking = generic
});
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION neardup');
$primary->safe_psql('postgres', 'CREATE EXTENSION pgstattuple');
nd_sql_lib($primary, 'index_check.sql');
for my $t (@tables)
{
	$primary->safe_psql(
		'postgres', qq{
		CREATE TABLE $t (id bigint PRIMARY KEY, sh simhash64) WITH (autovacuum_enabled = off);
		INSERT INTO $t SELECT i, nd_row_code(i) FROM generate_series(1, 50000) i;
	});
}
$primary->safe_psql(
	'postgres', q{
	CREATE INDEX rg_gist ON rg USING gist (sh);
	CREATE INDEX rn_gin ON rn USING gin (sh) WITH (fastupdate = on, gin_pending_list_limit = 256);
	CREATE INDEX rh_ham ON rh USING hamming (sh) WITH (pending_limit = 64);
	CREATE INDEX ro_one ON ro USING hamming (sh) WITH (pending_limit = 64, blocks = 4, only_block = 2);
});

# --- the standby ----------------------------------------------------------------------
# Replay waits for the standby's queries rather than cancel them
# (max_standby_streaming_delay = -1), and the primary may meanwhile write
# more than its max_wal_size: a slot keeps the WAL the standby still needs.
$primary->safe_psql('postgres',
	"SELECT pg_create_physical_replication_slot('standby', true)");
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf(
	'postgresql.conf', q{
max_standby_streaming_delay = -1
primary_slot_name = 'standby'
});
$standby->start;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'the standby runs (hot standby, streaming from the primary)');

sub digest
{
	my ($node, $t) = @_;
	return $node->safe_psql('postgres',
		qq{SELECT count(*) || ' rows, ' || md5(string_agg(id || ':' || coalesce(sh::text, '-'), ',' ORDER BY id))
		   FROM $t});
}

# on_standby(TABLE, INDEX, LABEL): the standby has the primary's rows, and
# its index paths return what its sequential scans return.
sub on_standby
{
	my ($t, $idx, $label) = @_;
	my $s = digest($standby, $t);
	is($s, digest($primary, $t),
		"$label: $t on the standby = $t on the primary ($s)");
	my ($rc, $out, $err) =
	  $standby->psql('postgres', "SELECT nd_check('$t', '$idx')");
	$out = "$out$err";
	note("$idx: " . (split / \|/, $out)[0]);
	my $pass = $out =~ /^checks=[1-9][0-9]* mismatches=0 wrong_plans=0$/;
	diag(substr($out, 0, 4000)) unless $pass;
	ok($pass, "$label: $idx on the standby: index scans = sequential scan");
	return;
}

# Until rh_ham's merges, which run in background workers, have ended and
# the standby has replayed everything the primary wrote.
sub replay
{
	$primary->poll_query_until('postgres',
		q{SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE backend_type = 'neardup merge')}
	) or note('a hamming merge is still running');
	$primary->wait_for_catchup($standby);
	note(
		'rh_ham on the standby: '
		  . $standby->safe_psql(
			'postgres',
			q{SELECT merges || ' merges, ' || insert_merges || ' by the inserting session'
			  FROM hamming_stats('rh_ham')}));
	return $standby->safe_psql('postgres',
		q{SELECT pending_tuples FROM pgstatginindex('rn_gin')});
}

# --- changes on the primary, replayed ---------------------------------------------------
my $sql = '';
for my $b (0 .. 39)
{
	my $lo = 50001 + $b * 500;
	my $hi = $lo + 499;
	$sql .=
	  "INSERT INTO $_ SELECT i, nd_row_code(i) FROM generate_series($lo, $hi) i;\n"
	  for @tables;
}
$primary->safe_psql('postgres', $sql);
for my $t (@tables)
{
	$primary->safe_psql(
		'postgres', qq{
		DELETE FROM $t WHERE id % 3 = 0 AND id < 40000;
		UPDATE $t SET sh = nd_flip(sh, 2, (id % 64)::int) WHERE id % 7 = 0 AND id < 20000;
	});
}
$primary->safe_psql(
	'postgres', q{
	CREATE INDEX sg_gist ON sg USING gist (sh);
	CREATE INDEX sn_gin ON sn USING gin (sh) WITH (fastupdate = off);
	CREATE INDEX sh_ham ON sh USING hamming (sh);
	CREATE INDEX so_one ON so USING hamming (sh) WITH (blocks = 4, only_block = 4);
});
my $pending = replay();
note("GIN pending list on the standby: $pending tuples");
ok($pending > 0,
	"rn_gin's pending list, replayed, is not empty (scans read it)");
on_standby('rg', 'rg_gist', 'after inserts, deletes, updates');
on_standby('rn', 'rn_gin', 'after inserts, deletes, updates');
on_standby('sg', 'sg_gist', 'after CREATE INDEX');
on_standby('sn', 'sn_gin', 'after CREATE INDEX');
on_standby('rh', 'rh_ham',
	'after inserts (merged along the way), deletes, updates');
on_standby('sh', 'sh_ham', 'after CREATE INDEX');
on_standby('ro', 'ro_one',
	'after inserts (merged along the way), deletes, updates');
on_standby('so', 'so_one', 'after CREATE INDEX');

# --- VACUUM, REINDEX CONCURRENTLY -------------------------------------------------------
for my $t (@tables)
{
	$primary->safe_psql('postgres', "DELETE FROM $t WHERE id % 5 = 0");
	$primary->safe_psql('postgres', "VACUUM $t");
}
$primary->safe_psql('postgres', "REINDEX INDEX CONCURRENTLY $_")
  for qw(sg_gist sn_gin sh_ham so_one);
is(replay(), 0,
	"VACUUM on the primary emptied rn_gin's pending list on the standby");
on_standby('rg', 'rg_gist', 'after VACUUM');
on_standby('rn', 'rn_gin', 'after VACUUM');
on_standby('sg', 'sg_gist', 'after REINDEX CONCURRENTLY');
on_standby('sn', 'sn_gin', 'after REINDEX CONCURRENTLY');
on_standby('rh', 'rh_ham', 'after VACUUM');
on_standby('sh', 'sh_ham', 'after REINDEX CONCURRENTLY');
on_standby('ro', 'ro_one', 'after VACUUM');
on_standby('so', 'so_one', 'after REINDEX CONCURRENTLY');

# --- hamming_check on the standby while merges and VACUUM are replayed ------------------
# Replay takes no merge lock, so a merge, a recycling or a VACUUM pass
# replayed during a check changes pages under it (VACUUM compacts the
# run's tables one after the other); the check must tell that from damage
# (reported as corruption, XX002).

# hamming_check()'s outcome on the standby on one line: "passed", or the
# error (verbose: with its SQLSTATE).
sub ham_check
{
	my ($heapallindexed) = @_;
	my ($rc, $out, $err) = $standby->psql(
		'postgres',
		"SELECT 'passed' FROM hamming_check('rh_ham', $heapallindexed)",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	my $res = "$out $err";
	$res =~ s/\s+/ /g;
	$res =~ s/^ | $//g;
	return $res;
}

$sql = '';
for my $r (0 .. 39)
{
	my $lo = 200001 + $r * 3000;
	my $hi = $lo + 2999;
	$sql .= "INSERT INTO rh SELECT i, nd_row_code(i) FROM generate_series($lo, $hi) i;\n"
	  . "DELETE FROM rh WHERE id % 40 = $r;\n"
	  . "VACUUM rh;\n";
	$sql .= "SELECT hamming_merge('rh_ham');\n" if $r % 4 == 3;
}
my $work = PostgreSQL::Test::Utils::tempdir();
append_to_file("$work/writer.sql", $sql);
my ($wout, $werr) = ('', '');
my $writer = IPC::Run::start(
	[
		$primary->installed_command('psql'), '-X', '-q', '-At',
		'-v', 'ON_ERROR_STOP=1', '-d', $primary->connstr('postgres'),
		'-f', "$work/writer.sql"
	],
	'>', \$wout, '2>', \$werr);
my ($passed, $corrupt, $other) = (0, 0, 0);
while ($writer->pumpable)
{
	$writer->pump_nb;
	my $out = ham_check('false');
	if ($out eq 'passed')
	{
		$passed++;
	}
	elsif ($out =~ /XX002/)
	{
		$corrupt++;
		note(substr($out, 0, 300));
	}
	else
	{
		$other++;
		note(substr($out, 0, 300));
	}
}
$writer->finish;
is($writer->result(0), 0,
	"the primary's inserts, deletes, VACUUMs and merges succeeded")
  or diag($werr);
note("hamming_check on the standby during 40 VACUUMs and 10 merges: "
	  . "$passed passed, $corrupt corrupt, $other other");
ok($corrupt == 0 && $passed > 0,
	'hamming_check on the standby reports no corruption while merges and VACUUM are replayed'
);
$primary->wait_for_catchup($standby);

# An error after the check, in the same query: the check's error handling
# must leave nothing behind (after a return from inside a PG_TRY, the next
# error jumps into a dead stack frame, and the standby restarts).
my $started =
  $standby->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
my ($rc, $out, $err) = $standby->psql('postgres',
	"SELECT hamming_check('rh_ham', false), 1 / (random() * 0)::int");
my (undef, $after) =
  $standby->psql('postgres', 'SELECT pg_postmaster_start_time()');
note($err);
ok($err =~ /division by zero/ && $after eq $started,
	'an error after hamming_check on the standby is an ordinary error (no restart of the standby)'
);
my $check = ham_check('true');
is($check, 'passed',
	"hamming_check (heapallindexed) on the standby after replay: $check");

unlike(
	slurp_file($standby->logfile),
	qr/inconsistent page found/,
	"the standby's replay of every generic WAL record matched its page image"
);

$standby->stop;
$primary->stop;
done_testing();
