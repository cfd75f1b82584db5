# The TAP harness itself: a node of the major the run asked for, loading
# the neardup under test (this tree's control file's version), answers a radius query through the index as a scan does.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NeardupTAP;

is(nd_major(), $ENV{ND_PG_MAJOR}, 'pg_config is of the major asked for');

my $node = nd_node('main');
$node->start;
is(int($node->safe_psql('postgres', 'SHOW server_version_num') / 10000),
	$ENV{ND_PG_MAJOR}, 'the server is of that major');

$node->safe_psql('postgres', 'CREATE EXTENSION neardup');
is( $node->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'neardup'"),
	$ENV{ND_DEFAULT_VERSION}, 'the control file\'s version is installed');

$node->safe_psql(
	'postgres', q{
	CREATE TABLE t (id int PRIMARY KEY, sh simhash64);
	INSERT INTO t SELECT i, simhash(md5(i::text) || ' ' || md5((i / 7)::text))
	  FROM generate_series(1, 5000) i;
	CREATE INDEX ON t USING hamming (sh);
	ANALYZE t;
});
my $q = q{SELECT string_agg(id::text, ',' ORDER BY id) FROM t
	WHERE sh <~> (SELECT sh FROM t WHERE id = 42) <= 12};
my $indexed = $node->safe_psql('postgres', "SET enable_seqscan = off; $q");
my $scanned = $node->safe_psql('postgres',
	"SET enable_indexscan = off; SET enable_bitmapscan = off; $q");
isnt($scanned, '', 'the scan finds rows');
is($indexed, $scanned, 'the index answers as the scan does');

$node->stop;
done_testing();
