# pg_upgrade across majors keeps neardup's indexes usable as they are.  A
# cluster of the older major (ND_UPGRADE_FROM, 17 when 18 is under test;
# test/tap/run.sh gives its installation, with this tree's neardup, as
# ND_OLD_INSTALL) holds a hamming index with several runs and a pending
# list, a near-duplicate exclusion constraint, GIN and GiST indexes on
# simhash64 and a GIN index on minhash_bands().  pg_upgrade moves the
# relation files unchanged into a cluster of the major under test, and
# there, with no REINDEX: the rows are the same, the hamming index has the
# same runs and list and passes hamming_check, each index answers as a
# sequential scan does, the hamming index takes inserts and merges them,
# the constraint refuses a near copy, and ALTER EXTENSION neardup UPDATE
# changes nothing.  The pages are the older build's; the newer server's
# build of the library must read them as they are.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NeardupTAP;

plan skip_all => 'no older server to upgrade from: '
  . ($ENV{ND_UPGRADE_SKIP}
	  // 'ND_OLD_INSTALL is not set (test/tap/run.sh sets it)')
  unless $ENV{ND_OLD_INSTALL};

my $default = $ENV{ND_DEFAULT_VERSION};
my $extversion =
  q{SELECT extversion FROM pg_extension WHERE extname = 'neardup'};
my $passes = q{SELECT 'passed' FROM hamming_check('%s', true)};

# What must come through the upgrade as it is: the rows, the hamming
# index's entries (runs, pending list, NULLs) and runs, and the pairs the
# band query finds.
my $rows = q{SELECT count(*) || ' ' || md5(string_agg(id || ':'
	|| coalesce(sh::text, '-') || ':' || coalesce(sig::text, '-'),
	',' ORDER BY id)) FROM docs};
my $stats = q{SELECT run_entries || ' ' || pending_entries || ' '
	|| null_entries FROM hamming_stats('docs_ham')};
my $runs = q{SELECT count(*) || ': ' || string_agg(entries::text, ' '
	ORDER BY run) FROM hamming_runs('docs_ham')};
my $band_query = q{SELECT coalesce(string_agg(a.id || ':' || b.id, ','
	ORDER BY a.id, b.id), '')
	FROM docs a JOIN docs b
	  ON minhash_similar(b.sig, a.sig, 0.6, 16, 8) AND a.id < b.id
	WHERE a.id % 97 = 0 AND a.sig IS NOT NULL};
my $seq = 'SET enable_indexscan = off; SET enable_bitmapscan = off;'
  . ' SET enable_indexonlyscan = off;';

# nd_check_ok(NODE, INDEX, OTHER...): nd_check finds every query on INDEX
# answered as the sequential scan answers it and planned on INDEX; the
# OTHER indexes of docs are dropped for it in a transaction rolled back.
sub nd_check_ok
{
	my ($node, $index, @other) = @_;
	my $drop = @other ? 'DROP INDEX ' . join(', ', @other) . ';' : '';
	my $out = $node->safe_psql('postgres',
		"BEGIN; $drop SELECT nd_check('docs', '$index'); ROLLBACK;");
	return like(
		$out,
		qr/^checks=[1-9]\d* mismatches=0 wrong_plans=0$/,
		"$index answers as the sequential scan (" . $node->name . ')');
}

# --- the old cluster -------------------------------------------------------
my $old =
  PostgreSQL::Test::Cluster->new('old', install_path => $ENV{ND_OLD_INSTALL});
my $new = nd_node('new');

# 18's initdb turns data checksums on, and pg_upgrade wants them on both
# sides: an older major's cluster gets them at initdb.
my @checksums =
  $old->pg_version < 18 && $new->pg_version >= 18 ? ('--data-checksums') : ();
$old->init(extra => \@checksums);
$old->append_conf('postgresql.conf', "lc_messages = 'C'\n");
$old->start;
is( int($old->safe_psql('postgres', 'SHOW server_version_num') / 10000),
	$ENV{ND_UPGRADE_FROM},
	"the old cluster runs PostgreSQL $ENV{ND_UPGRADE_FROM}");
$old->safe_psql('postgres', 'CREATE EXTENSION neardup');
is($old->safe_psql('postgres', $extversion),
	$default, "the old cluster has neardup $default");
nd_sql_lib($old, 'index_check.sql');

# docs: nd_row_code's fingerprints (index_check.sql), and texts with their
# MinHash signatures on the first 3000 rows; no other index, which the
# planner could pick over the one nd_check checks.  The hamming index
# flushes a run per 4,681 entries (pending_limit = 64 kB), in the
# inserting session.
$old->safe_psql(
	'postgres', q{
	CREATE TABLE docs (id bigint, sh simhash64, body text, sig int4[])
	  WITH (autovacuum_enabled = off);
	INSERT INTO docs (id, sh)
	  SELECT i, nd_row_code(i) FROM generate_series(1, 40000) i;
	UPDATE docs SET body = 'document ' || (id % 700) || ' about topic '
	  || (id % 37) || ' with words ' || (id % 11) || ' and more words here'
	  WHERE id <= 3000;
	UPDATE docs SET sig = minhash(body) WHERE body IS NOT NULL;
	CREATE INDEX docs_ham ON docs USING hamming (sh)
	  WITH (pending_limit = 64, background_merge = off);
	CREATE INDEX docs_gin ON docs USING gin (sh);
	CREATE INDEX docs_gist ON docs USING gist (sh);
	CREATE INDEX docs_bands ON docs USING gin (minhash_bands(sig, 16, 8));
	INSERT INTO docs (id, sh)
	  SELECT i, nd_row_code(i) FROM generate_series(40001, 50000) i;
	DELETE FROM docs WHERE id % 13 = 0;
	VACUUM docs;
	INSERT INTO docs (id, sh)
	  SELECT i, nd_row_code(i) FROM generate_series(50001, 51000) i;
	ANALYZE docs;

	CREATE TABLE x (id int, sh simhash64,
	  EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&));
	INSERT INTO x SELECT i, ('x' || md5('x ' || i))::bit(64)::bigint::simhash64
	  FROM generate_series(1, 5000) i;
});

my %before = (
	rows => $old->safe_psql('postgres', "$seq $rows"),
	stats => $old->safe_psql('postgres', $stats),
	runs => $old->safe_psql('postgres', $runs),
	bands => $old->safe_psql('postgres', "$seq $band_query"));
my ($nruns) = $before{runs} =~ /^(\d+):/;
my (undef, $pending) = split / /, $before{stats};
note "before: rows $before{rows}; hamming_stats $before{stats};"
  . " runs $before{runs}";
ok( $nruns >= 2 && $pending > 0,
	"the old hamming index has several runs ($nruns)"
	  . " and a pending list ($pending entries)");
isnt($before{bands}, '', 'the band query finds pairs');
nd_check_ok($old, 'docs_ham', 'docs_gin', 'docs_gist');

# --- pg_upgrade, as src/bin/pg_upgrade/t/002_pg_upgrade.pl runs it ---------
$old->stop;
chdir ${PostgreSQL::Test::Utils::tmp_check};
my @upgrade = (
	'pg_upgrade', '--no-sync',
	'--old-datadir' => $old->data_dir,
	'--new-datadir' => $new->data_dir,
	'--old-bindir' => $old->config_data('--bindir'),
	'--new-bindir' => $new->config_data('--bindir'),
	'--socketdir' => $new->host,
	'--old-port' => $old->port,
	'--new-port' => $new->port,
	'--copy');
command_ok([ @upgrade, '--check' ], 'pg_upgrade --check passes');
command_ok(\@upgrade, 'pg_upgrade upgrades the cluster');
ok( !-d $new->data_dir . '/pg_upgrade_output.d',
	'pg_upgrade left no output directory (it succeeded)');

# --- the new cluster, no REINDEX --------------------------------------------
$new->start;
is(int($new->safe_psql('postgres', 'SHOW server_version_num') / 10000),
	$ENV{ND_PG_MAJOR}, "the new cluster runs PostgreSQL $ENV{ND_PG_MAJOR}");
is($new->safe_psql('postgres', $extversion),
	$default, "the upgraded cluster has neardup $default");

is($new->safe_psql('postgres', "$seq $rows"),
	$before{rows}, 'the rows are the same');
is($new->safe_psql('postgres', $stats),
	$before{stats},
	'hamming_stats: the same entries in the runs, the pending list, NULLs');
is($new->safe_psql('postgres', $runs),
	$before{runs}, 'hamming_runs: the same runs');
is($new->safe_psql('postgres', sprintf($passes, 'docs_ham')),
	'passed', 'hamming_check passes on the upgraded hamming index');
my $excl = $new->safe_psql(
	'postgres',
	q{SELECT conindid::regclass FROM pg_constraint
	  WHERE conrelid = 'x'::regclass AND contype = 'x'});
is($new->safe_psql('postgres', sprintf($passes, $excl)),
	'passed', "hamming_check passes on the constraint's index $excl");

nd_check_ok($new, 'docs_ham', 'docs_gin', 'docs_gist');
nd_check_ok($new, 'docs_gin', 'docs_ham', 'docs_gist');
nd_check_ok($new, 'docs_gist', 'docs_ham', 'docs_gin');
like(
	$new->safe_psql(
		'postgres',
		"SET enable_seqscan = off; EXPLAIN (COSTS OFF) $band_query"),
	qr/docs_bands/,
	'the band query is planned on the minhash_bands index');
is( $new->safe_psql('postgres', "SET enable_seqscan = off; $band_query"),
	$before{bands},
	'the minhash_bands index answers as the old sequential scan');
is($new->safe_psql('postgres', "$seq $band_query"),
	$before{bands}, 'and as the new sequential scan');

# Inserts go to the upgraded index's pending list and flush it into new
# runs beside the old ones; hamming_merge flushes the rest.  VACUUM then
# passes over the upgraded runs, and empties GIN's pending list, which
# every GIN scan would otherwise read whole.
my $merges = q{SELECT merges FROM hamming_stats('docs_ham')};
my $merges_before = $new->safe_psql('postgres', $merges);
$new->safe_psql('postgres',
		'INSERT INTO docs (id, sh)'
	  . ' SELECT i, nd_row_code(i) FROM generate_series(51001, 61000) i');
my $merges_after = $new->safe_psql('postgres', $merges);
cmp_ok($merges_after, '>', $merges_before,
		"inserts flush the upgraded index's pending list"
	  . " (merges $merges_before -> $merges_after)");
$new->safe_psql('postgres', q{SELECT hamming_merge('docs_ham')});
my (undef, $pending_after) = split / /, $new->safe_psql('postgres', $stats);
is($pending_after, 0, 'hamming_merge empties the pending list');
$new->safe_psql('postgres', 'VACUUM docs');
note 'after the inserts: runs ' . $new->safe_psql('postgres', $runs);
is($new->safe_psql('postgres', sprintf($passes, 'docs_ham')),
	'passed', 'hamming_check passes with the new runs');
nd_check_ok($new, 'docs_ham', 'docs_gin', 'docs_gist');
nd_check_ok($new, 'docs_gin', 'docs_ham', 'docs_gist');
nd_check_ok($new, 'docs_gist', 'docs_ham', 'docs_gin');

# The constraint: a near copy (2 bits off) of a row inserted before the
# upgrade is refused, a code far from every row is taken.
my ($ret, $stdout, $stderr) = $new->psql(
	'postgres',
	q{INSERT INTO x VALUES (-1,
	  (('x' || md5('x 77'))::bit(64)::bigint # 5)::simhash64)});
like(
	$stderr,
	qr/conflicting key value violates exclusion constraint/,
	'the constraint refuses a near copy of a row inserted before the upgrade'
);
$new->safe_psql('postgres',
	q{INSERT INTO x VALUES (-2, 0::bigint::simhash64)});
is($new->safe_psql('postgres', 'SELECT count(*) FROM x WHERE id < 0'),
	1, 'and takes a row that is no near copy');

# ALTER EXTENSION neardup UPDATE: nothing to do.
($ret, $stdout, $stderr) =
  $new->psql('postgres', 'ALTER EXTENSION neardup UPDATE');
is($ret, 0, 'ALTER EXTENSION neardup UPDATE succeeds');
like(
	$stderr,
	qr/version "\Q$default\E" of extension "neardup" is already installed/,
	'and says that the version is already installed');
is($new->safe_psql('postgres', $extversion),
	$default, 'extversion is unchanged');

$new->stop;
done_testing();
