# The near-duplicate exclusion constraint
#   EXCLUDE USING hamming|gist (hamming_ball(sh, 3) WITH &&)
# holds where a unique-like constraint has to: under concurrent inserters,
# across a crash, a dump and restore, and on a promoted standby.  An
# application's own "look up, then insert" does not, which the control table
# shows.
#
# Groups of near-copies: member m (0..7) of group g is the center
# nd_center(g) with bit 7m flipped (m > 0), so members are within 2 bits of
# each other and groups ~32 bits apart.  Distances in the checks come from
# bit_count(), not from the extension.
#   1. pgbench, 8 clients, each transaction inserts a random member of one
#      of 40 groups with ON CONFLICT DO NOTHING and holds its transaction
#      open for 20 ms, so that inserts of one group overlap; into a table
#      constrained through a hamming index, one through GiST, and a control
#      table where the application looks up, then inserts (no constraint).
#      Constrained tables end with exactly one row per group and no pair
#      within 3 bits; the control lets near-copies in.
#   2. 4 psql sessions with plain INSERTs of members of 30 new groups: each
#      group's first commit wins, every other insert fails with 23P01 (or,
#      when two uncommitted inserts wait for each other, 40P01 for the
#      deadlock detector's victim), and rows + those errors = attempts.
#   3. kill -9 of the postmaster and its children while inserters run; after
#      recovery no pair within 3 bits, hamming_check passes, and a near-copy
#      of a stored row is still refused.
#   4. pg_dump -Fc / pg_restore into a new database: both constraints are
#      there with every row and still refuse near-copies.
#   5. a streaming standby (pg_basebackup), fed more constrained inserts,
#      then promoted: near-copies of rows from before the base backup and of
#      streamed rows are refused, and 4 concurrent inserters of near-copy
#      groups leave one row per group, no pair within 3 bits and a sound
#      index.
use strict;
use warnings;

use IPC::Run;
use Time::HiRes qw(usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NeardupTAP;

my $node = nd_node('primary', allows_streaming => 1);
# the framework's streaming defaults (1MB of shared buffers, 10
# connections) are for many small servers; this one takes 8 clients and more
$node->append_conf('postgresql.conf',
	"shared_buffers = 128MB\nmax_connections = 40\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION neardup');
nd_sql_lib($node, 'index_check.sql');
$node->safe_psql(
	'postgres', q{
CREATE FUNCTION nd_member(g int, m int) RETURNS simhash64
LANGUAGE sql IMMUTABLE AS $$ SELECT nd_flip(nd_center(g), least(m, 1), m * 7) $$;
CREATE SEQUENCE ids;
CREATE TABLE xh (id bigint PRIMARY KEY, grp int, sh simhash64,
    CONSTRAINT xh_near EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&));
CREATE TABLE xg (id bigint PRIMARY KEY, grp int, sh simhash64,
    CONSTRAINT xg_near EXCLUDE USING gist (hamming_ball(sh, 3) WITH &&));
CREATE TABLE xc (id bigint PRIMARY KEY, grp int, sh simhash64);
});
my $work = PostgreSQL::Test::Utils::tempdir;

# pairs(NODE, TABLE): pairs of rows within 3 bits.
sub pairs
{
	my ($n, $t) = @_;
	return $n->safe_psql(
		'postgres',
		"SELECT count(*) FROM $t a JOIN $t b ON a.id < b.id
		   AND bit_count((a.sh::bigint # b.sh::bigint)::bit(64)) <= 3");
}

# rows_groups(NODE, CONDITION): "ROWS GROUPS" of xh's rows where CONDITION.
sub rows_groups
{
	my ($n, $cond) = @_;
	return $n->safe_psql('postgres',
		"SELECT count(*) || ' ' || count(DISTINCT grp) FROM xh WHERE $cond");
}

# error_of(NODE, DB, SQL): the first line psql prints on stderr for SQL
# (verbose: with the SQLSTATE), or what it printed on stdout if it succeeded.
sub error_of
{
	my ($n, $db, $sql) = @_;
	my ($out, $err) = ('', '');
	$n->psql(
		$db, "\\set VERBOSITY verbose\n$sql",
		stdout => \$out,
		stderr => \$err);
	return $err eq '' ? "no error: $out" : (split /\n/, $err)[0];
}

# ham_check(NODE, DB, INDEX): "passed", or hamming_check()'s error.
sub ham_check
{
	my ($n, $db, $idx) = @_;
	my ($out, $err) = ('', '');
	$n->psql(
		$db,
		"\\set VERBOSITY verbose\nSELECT 'passed' FROM hamming_check('$idx', true)",
		stdout => \$out,
		stderr => \$err);
	return $out eq 'passed' ? $out : "$out $err";
}

my $conflict =
  qr/ERROR:  23P01: conflicting key value violates exclusion constraint "xh_near"/;

# --- 1. pgbench: ON CONFLICT DO NOTHING, and the look-up-then-insert control --
my %bench;
for my $t ('xh', 'xg')
{
	$bench{$t} = qq{\\set g random(0, 39)
\\set m random(0, 7)
BEGIN;
INSERT INTO $t VALUES (nextval('ids'), :g, nd_member(:g, :m)) ON CONFLICT DO NOTHING;
SELECT pg_sleep(0.02);
COMMIT;
};
}
$bench{xc} = q{\set g random(0, 39)
\set m random(0, 7)
BEGIN;
INSERT INTO xc SELECT nextval('ids'), :g, s.c FROM (SELECT nd_member(:g, :m) AS c) s
WHERE NOT EXISTS (SELECT 1 FROM xc WHERE bit_count((xc.sh::bigint # s.c::bigint)::bit(64)) <= 3);
SELECT pg_sleep(0.02);
COMMIT;
};
for my $t ('xh', 'xg', 'xc')
{
	$node->pgbench(
		'-n -c 8 -j 2 -t 40',
		0,
		[qr{actually processed: 320/320}],
		[],
		"$t: pgbench, 8 clients, 320 transactions",
		{ "$t.sql" => $bench{$t} },
		'postgres');
	my ($rows, $groups) = split / /,
	  $node->safe_psql('postgres',
		"SELECT count(*) || ' ' || count(DISTINCT grp) FROM $t");
	my $p = pairs($node, $t);
	note "$t: $rows rows for $groups groups, $p pairs within 3 bits";
	if ($t eq 'xc')
	{
		cmp_ok($p, '>', 0,
			"control: looking up, then inserting, lets near-copies in under concurrency ($p pairs)"
		);
	}
	else
	{
		is($rows, $groups,
			"$t: 8 concurrent inserters with ON CONFLICT DO NOTHING leave one row per group"
		);
		is($p, 0, "$t: no pair within 3 bits");
	}
}

# --- 2. plain INSERTs: one winner per group, 23P01 for the rest ---------------
# Each session reads its script from a file (\i), not from this process, so
# that all four run at once while this process waits on one of them; they
# start together once the gate (an advisory lock held here) opens.  After each INSERT the session echoes its
# SQLSTATE and, when it failed, the error message, and rolls back.
my $gate = $node->background_psql('postgres');
$gate->query_safe('SELECT pg_advisory_lock(4242)');
my @sessions;
for my $s (1 .. 4)
{
	my $script =
		"\\set VERBOSITY terse\n"
	  . "SELECT pg_advisory_lock_shared(4242);\n"
	  . "SELECT pg_advisory_unlock_shared(4242);\n";
	for my $i (0 .. 59)
	{
		my $g = 100 + ($i * 7 + $s * 13) % 30;
		my $m = ($i + $s) % 8;
		$script .=
			"BEGIN;\n"
		  . "INSERT INTO xh VALUES (nextval('ids'), $g, nd_member($g, $m));\n"
		  . "\\echo insert :SQLSTATE :LAST_ERROR_MESSAGE\n"
		  . "\\if :ERROR\nROLLBACK;\n\\else\n"
		  . "SELECT pg_sleep(0.005);\nCOMMIT;\n\\endif\n";
	}
	append_to_file("$work/plain$s.sql", $script);
	my $session = $node->background_psql('postgres', on_error_stop => 0);
	$session->query_until(qr/ready\n/,
		"\\echo ready\n\\i $work/plain$s.sql\n");
	push @sessions, $session;
}
$gate->query_safe('SELECT pg_advisory_unlock(4242)');
$gate->quit;
my ($errors, $deadlocks, @other) = (0, 0);
for my $session (@sessions)
{
	my ($out) = $session->query("\\echo finished");
	$session->quit;
	for my $line (split /\n/, $out)
	{
		next unless $line =~ /^insert (\S+) ?(.*)$/;
		my ($state, $message) = ($1, $2);
		if (   $state eq '23P01'
			&& $message =~
			/^conflicting key value violates exclusion constraint "xh_near"/)
		{
			$errors++;
		}
		elsif ($state eq '40P01')
		{
			# Two sessions whose uncommitted rows conflict wait for each
			# other: one is the deadlock detector's victim, as with any
			# exclusion constraint.
			$deadlocks++;
		}
		elsif ($state ne '00000')
		{
			push @other, "$state $message";
		}
	}
}
my ($rows, $groups) = split / /,
  rows_groups($node, 'grp BETWEEN 100 AND 999');
note "plain INSERTs: 240 attempts, $rows rows for $groups groups, "
  . "$errors exclusion violations, $deadlocks deadlock victims";
is("$rows $groups", '30 30',
	'4 sessions of plain INSERTs: one row per group');
is( $rows + $errors + $deadlocks,
	240,
	'23P01 (or a deadlock victim\'s 40P01) for every other attempt, nothing else lost'
);
is(join('; ', @other), '', 'no other error');
is(pairs($node, 'xh'),
	0, 'no pair within 3 bits in the hamming-constrained table');

# --- 3. kill -9 during inserts --------------------------------------------------

# children(PID): the processes whose parent is PID.
sub children
{
	my ($parent) = @_;
	my @kids;
	opendir(my $dh, '/proc') or die "opendir /proc: $!";
	for my $p (grep { /^\d+$/ } readdir $dh)
	{
		open(my $fh, '<', "/proc/$p/stat") or next;
		my $stat = <$fh>;
		close $fh;
		push @kids, $p
		  if defined $stat && $stat =~ /\)\s+\S+\s+(\d+)/ && $1 == $parent;
	}
	closedir $dh;
	return @kids;
}

# alive(PID): the process exists and is not a zombie.
sub alive
{
	my ($p) = @_;
	open(my $fh, '<', "/proc/$p/status") or return 0;
	my $status = do { local $/; <$fh> };
	close $fh;
	return $status !~ /^State:\s*Z/m;
}

# kill_all(NODE): kill -9 of the postmaster and all its children, until none
# is left.  A killed process may stay a zombie here (its new parent need not
# reap it) and a zombie's pid still answers kill(pid, 0), so the lock files
# naming the postmaster go too, as when the machine is rebooted.  Returns
# the number of children killed.
sub kill_all
{
	my ($n) = @_;
	my $pidfile = $n->data_dir . '/postmaster.pid';
	my ($pm) = split /\n/, slurp_file($pidfile);
	my @kids = children($pm);
	$n->kill9;
	kill 'KILL', @kids;
	for my $p ($pm, @kids)
	{
		usleep(100_000) while alive($p);
	}
	unlink $pidfile, $n->host . '/.s.PGSQL.' . $n->port . '.lock';
	return scalar @kids;
}

append_to_file(
	"$work/crash.sql", q{\set g random(1000, 1999)
\set m random(0, 7)
INSERT INTO xh VALUES (nextval('ids'), :g, nd_member(:g, :m)) ON CONFLICT DO NOTHING;
});
my ($bench_out, $bench_err) = ('', '');
my $bench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '4', '-j', '2', '-T', '60',
		'-h', $node->host, '-p', $node->port, '-f', "$work/crash.sql",
		'postgres'
	],
	'>',
	\$bench_out,
	'2>',
	\$bench_err);
$node->poll_query_until('postgres',
	'SELECT count(*) >= 300 FROM xh WHERE grp >= 1000')
  or diag 'the inserts did not progress';
my $killed = kill_all($node);
$bench->finish;
note "killed the postmaster and $killed processes";
$node->start;
($rows, $groups) = split / /, rows_groups($node, 'grp >= 1000');
note "after the crash: $rows rows for $groups groups";
cmp_ok($rows, '>=', 1, 'kill -9 during inserts: rows from before the crash');
is($rows, $groups, 'after recovery: one row per group');
is(pairs($node, 'xh'), 0, 'after recovery: no pair within 3 bits');
is(ham_check($node, 'postgres', 'xh_near'),
	'passed', 'after recovery: hamming_check passes');
like(
	error_of(
		$node,
		'postgres',
		"INSERT INTO xh SELECT nextval('ids'), grp, nd_flip(sh, 1, 3) FROM xh WHERE grp >= 1000 LIMIT 1"
	),
	$conflict,
	'after recovery: a near-copy is refused');

# --- 4. dump and restore --------------------------------------------------------
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$work/dump", 'postgres' ],
	'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
my (undef, $restore_err) = run_command(
	[
		'pg_restore', '-h', $node->host, '-p',
		$node->port, '-d', 'restored', "$work/dump"
	]);
note "restore: $_" for grep { $_ ne '' } split /\n/, $restore_err;
my $cons = $node->safe_psql(
	'restored',
	"SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), '; ' ORDER BY conname)
	   FROM pg_constraint WHERE contype = 'x'");
note "restored: $cons";
like(
	$cons,
	qr/xh_near EXCLUDE USING hamming \(hamming_ball\(sh, 3\) WITH &&\)/,
	'pg_restore: the hamming constraint is restored');
like(
	$cons,
	qr/xg_near EXCLUDE USING gist \(hamming_ball\(sh, 3\) WITH &&\)/,
	'pg_restore: the GiST constraint is restored');
my $counts =
  "SELECT (SELECT count(*) FROM xh) || ' ' || (SELECT count(*) FROM xg)";
is( $node->safe_psql('restored', $counts),
	$node->safe_psql('postgres', $counts),
	'pg_restore: every row');
like(
	error_of(
		$node,
		'restored',
		'INSERT INTO xh SELECT -1, grp, nd_flip(sh, 1, 5) FROM xh WHERE sh IS NOT NULL LIMIT 1'
	),
	$conflict,
	'pg_restore: the hamming constraint refuses a near-copy');
like(
	error_of(
		$node,
		'restored',
		'INSERT INTO xg SELECT -1, grp, nd_flip(sh, 1, 5) FROM xg WHERE sh IS NOT NULL LIMIT 1'
	),
	qr/ERROR:  23P01: conflicting key value violates exclusion constraint "xg_near"/,
	'pg_restore: the GiST constraint refuses a near-copy');
is(ham_check($node, 'restored', 'xh_near'),
	'passed', 'pg_restore: hamming_check passes on the restored index');

# --- 5. a standby, promoted -----------------------------------------------------
$node->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'base', has_streaming => 1);
$standby->start;
# 200 inserts into 40 groups, each group in turn (a random pick leaves one
# group out about one time in five)
$node->safe_psql('postgres', 'CREATE SEQUENCE stream_groups');
$node->pgbench(
	'-n -c 4 -j 2 -t 50',
	0,
	[qr{actually processed: 200/200}],
	[],
	'pgbench on the primary while the standby streams',
	{
		'stream.sql' => q{\set m random(0, 7)
INSERT INTO xh SELECT nextval('ids'), g, nd_member(g, :m)
FROM (SELECT 3000 + (nextval('stream_groups') % 40)::int AS g) s ON CONFLICT DO NOTHING;
}
	},
	'postgres');
$node->wait_for_catchup($standby);
$standby->promote;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	'f', 'the standby is promoted');
like(
	error_of(
		$standby,
		'postgres',
		"INSERT INTO xh SELECT nextval('ids'), grp, nd_flip(sh, 1, 9) FROM xh WHERE grp BETWEEN 100 AND 129 LIMIT 1"
	),
	$conflict,
	'promoted: a near-copy of a row from before the base backup is refused');
like(
	error_of(
		$standby,
		'postgres',
		"INSERT INTO xh SELECT nextval('ids'), grp, nd_flip(sh, 1, 9) FROM xh WHERE grp >= 3000 LIMIT 1"
	),
	$conflict,
	'promoted: a near-copy of a streamed row is refused');
is( $standby->safe_psql(
		'postgres',
		"WITH i AS (INSERT INTO xh SELECT nextval('ids'), grp, nd_flip(sh, 1, 11) FROM xh WHERE grp >= 3000
		            ON CONFLICT DO NOTHING RETURNING 1) SELECT count(*) FROM i"),
	0,
	'promoted: ON CONFLICT DO NOTHING skips near-copies of streamed rows');
is( $standby->safe_psql(
		'postgres',
		"SELECT count(DISTINCT grp) || '/' || count(*) FROM xh WHERE grp BETWEEN 3000 AND 3999"
	),
	'40/40',
	'promoted: every streamed group is there, one row each');
$standby->pgbench(
	'-n -c 4 -j 2 -t 100',
	0,
	[qr{actually processed: 400/400}],
	[],
	'pgbench, 4 clients, on the promoted standby',
	{
		'promoted.sql' => q{\set g random(4000, 4039)
\set m random(0, 7)
BEGIN;
INSERT INTO xh VALUES (nextval('ids'), :g, nd_member(:g, :m)) ON CONFLICT DO NOTHING;
SELECT pg_sleep(0.01);
COMMIT;
}
	},
	'postgres');
is(rows_groups($standby, 'grp >= 4000'),
	'40 40', 'promoted: 400 concurrent inserts leave one row per group');
is(pairs($standby, 'xh'), 0, 'promoted: no pair within 3 bits');
is(ham_check($standby, 'postgres', 'xh_near'),
	'passed', 'promoted: hamming_check passes');

$standby->stop;
$node->stop;
done_testing();
