# A hamming index reads a run's directory a page at a time, as searches need
# it: a new session's first search reads the directory pages that hold its
# key range, not the whole directory.  The ranges that cross from one
# directory page to the next are the ones a regress-sized table never has
# (a directory page covers 1,019 data pages, about 593,000 entries).  Here a
# run of 1.25M entries has 3 directory pages per table, and queries planted
# at the first key of each, each the first query of a new session, must
# answer as a sequential scan does -- with the header listing the directory
# pages, and with the two-level layout (index pages that list them).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NeardupTAP;

my $rows = 1_250_000;
# entries of a data page and of a directory page at 8kB pages (hamming.h)
my $page_entries = 582;
my $dir_entries = 1019;

my $node = nd_node('main');
$node->start;
$node->safe_psql(
	'postgres', qq{
	CREATE EXTENSION neardup;
	CREATE FUNCTION code(k bigint) RETURNS simhash64 LANGUAGE sql IMMUTABLE
	AS \$\$ SELECT ((hashint8(k)::bigint << 32) | (hashint8(-k)::bigint & 4294967295))::simhash64 \$\$;
	-- pairs: a code, and a copy with one of its low 40 bits flipped
	CREATE TABLE d (id bigint, sh simhash64) WITH (autovacuum_enabled = off);
	INSERT INTO d SELECT i, CASE WHEN i % 2 = 0 THEN code(i / 2)
	                             ELSE (code(i / 2)::bigint # (1::bigint << (i % 40)))::simhash64 END
	FROM generate_series(1, $rows) i;
	VACUUM ANALYZE d;
});

# Table 0 keeps the codes themselves in unsigned order: directory page j
# starts at entry j * 1019 * 582 of that order.
my $per_dir = $page_entries * $dir_entries;
my @queries;
for (my $start = $per_dir; $start < $rows; $start += $per_dir)
{
	foreach my $off (-600, -1, 0, 1, 600)
	{
		push @queries,
		  $node->safe_psql(
			'postgres', qq{
			SELECT sh FROM d ORDER BY sh::bigint # (-9223372036854775808)::bigint
			OFFSET @{[ $start + $off ]} LIMIT 1});
	}
}
cmp_ok(scalar @queries, '>=', 10, 'queries planted at two directory page boundaries');

sub answers
{
	my ($q, $index) = @_;
	my $set =
	  $index
	  ? 'SET enable_seqscan = off; SET enable_bitmapscan = off;'
	  : 'SET enable_indexscan = off; SET enable_bitmapscan = off;';
	my @out;
	foreach my $r (0, 2, 3, 6)
	{
		push @out,
		  $node->safe_psql('postgres',
			"$set SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM d WHERE sh <~> '$q' <= $r"
		  );
	}
	push @out,
	  $node->safe_psql('postgres',
		"$set SELECT string_agg(dist::text, ',') FROM (SELECT sh <~> '$q' AS dist FROM d ORDER BY sh <~> '$q' LIMIT 20) s"
	  );
	return join(' | ', @out);
}

my %scanned = map { $_ => answers($_, 0) } @queries;

foreach my $layout ('header', 'two-level')
{
	my $set =
	  $layout eq 'header' ? '' : 'SET neardup.debug_run_header_dirs = 2;';
	$node->safe_psql('postgres', "$set CREATE INDEX d_sh ON d USING hamming (sh)");
	my $pages = $node->safe_psql('postgres', "SELECT pages FROM hamming_runs('d_sh')");
	my $data = int(($rows + $page_entries - 1) / $page_entries);
	my $dirs = int(($data + $dir_entries - 1) / $dir_entries);
	# a header page, and per table its data, directory and index pages
	is($pages, 1 + 4 * ($data + $dirs + ($layout eq 'header' ? 0 : 1)),
		"$layout: the run has $data data pages and $dirs directory pages a table");
	# Every query is the first search of its session (the index's
	# directory is not in the backend), and the sessions read in turn.
	my $wrong = 0;
	foreach my $q (@queries)
	{
		my $got = answers($q, 1);
		if ($got ne $scanned{$q})
		{
			$wrong++;
			diag("$layout: $q: index $got, scan $scanned{$q}");
		}
	}
	is($wrong, 0, "$layout: queries at directory page boundaries answer as the scan does");
	like(
		$node->safe_psql(
			'postgres',
			"SET enable_seqscan = off; SET enable_bitmapscan = off; EXPLAIN SELECT id FROM d WHERE sh <~> '$queries[0]' <= 3"
		),
		qr/d_sh/,
		"$layout: the queries go through the index");
	is($node->safe_psql('postgres', "SELECT hamming_check('d_sh', true)"),
		'', "$layout: hamming_check passes");
	$node->safe_psql('postgres', 'DROP INDEX d_sh');
}

$node->stop;
done_testing();
