# Logical replication of simhash64 and MinHash columns from a publisher
# (wal_level = logical) to a subscriber node, both loading the neardup under
# test.  Replication carries rows through simhash64's output/input (text)
# and send/receive (binary) functions, and the subscriber indexes what it
# receives on its own; both must agree with the publisher.  Checks:
#   - a subscriber database without the extension cannot take the table:
#     CREATE TABLE fails with 42704 (type "simhash64" does not exist), and
#     the publisher's rows are untouched;
#   - the initial copy and then ongoing inserts, updates and deletes arrive,
#     row for row, through a text and a binary subscription;
#   - the subscriber's own hamming, GIN and GiST indexes on sh, and its GIN
#     index on minhash_bands(sig, ...), answer as its sequential scans do
#     (so as the publisher's rows do) after the copy and after the changes.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NeardupTAP;

my $pub = nd_node('publisher', allows_streaming => 'logical');
# the framework's streaming defaults (1MB of shared buffers, 10
# connections) are for many small servers; this one holds 22,000 texts
$pub->append_conf('postgresql.conf',
	"shared_buffers = 128MB\nmax_connections = 40\n");
$pub->start;
my $sub = nd_node('subscriber');
$sub->start;

my $table =
  'CREATE TABLE docs (id bigint PRIMARY KEY, body text NOT NULL, sh simhash64, sig int4[])';

# --- the publisher ----------------------------------------------------------------
$pub->safe_psql(
	'postgres', qq{
CREATE EXTENSION neardup;
$table;
-- 20,000 texts of 40 words from 3,000, and 2,000 edited copies of some of them
CREATE FUNCTION doc_text(seed bigint, words int) RETURNS text LANGUAGE sql IMMUTABLE AS \$\$
    SELECT string_agg('w' || ('x' || substr(md5(seed || '/' || j), 1, 6))::bit(24)::int % 3000, ' ' ORDER BY j)
    FROM generate_series(1, words) j \$\$;
INSERT INTO docs (id, body) SELECT i, doc_text(i, 40) FROM generate_series(1, 20000) i;
INSERT INTO docs (id, body)
SELECT 100000 + id, regexp_replace(body, '^\\S+', 'edited') FROM docs WHERE id <= 2000;
UPDATE docs SET sh = simhash(body), sig = minhash(body);
CREATE PUBLICATION pub FOR TABLE docs;
});

# digest(NODE, DB): the rows of docs, as one line.
sub digest
{
	my ($node, $db) = @_;
	return $node->safe_psql($db,
		"SELECT count(*) || ' rows, ' || md5(string_agg(id || ':' || body || ':' || coalesce(sh::text, '-') || ':' || coalesce(sig::text, '-'), ',' ORDER BY id)) FROM docs"
	);
}

# psql_out(NODE, DB, SQL): what psql prints on stdout, followed by its
# errors, if any.
sub psql_out
{
	my ($node, $db, $sql) = @_;
	my ($out, $err) = ('', '');
	$node->psql($db, $sql, stdout => \$out, stderr => \$err);
	return $err eq '' ? $out : "$out\n$err";
}

my $before = digest($pub, 'postgres');
note "publisher: $before";

# --- the subscriber ---------------------------------------------------------------
# A database without the extension: the table cannot be created.
$sub->safe_psql('postgres', 'CREATE DATABASE plain');
my $out = psql_out($sub, 'plain', "\\set VERBOSITY verbose\n$table");
note $out;
like(
	$out,
	qr/ERROR:  42704: type "simhash64" does not exist/,
	'a subscriber without the extension: CREATE TABLE fails with 42704 (type simhash64 does not exist)'
);
is(digest($pub, 'postgres'), $before, 'the publisher is untouched');

# Two subscriber databases: text and binary transfer.
my $check_sql = slurp_file("$ENV{ND_TEST_LIB}/index_check.sql");
for my $db ('subtext', 'subbin')
{
	$sub->safe_psql('postgres', "CREATE DATABASE $db");
	$sub->safe_psql($db, 'CREATE EXTENSION neardup');
	$sub->safe_psql($db, $check_sql);
	$sub->safe_psql(
		$db, qq{
$table;
CREATE INDEX docs_ham ON docs USING hamming (sh) WITH (pending_limit = 64);
CREATE INDEX docs_gin ON docs USING gin (sh);
CREATE INDEX docs_gist ON docs USING gist (sh);
CREATE INDEX docs_bands ON docs USING gin (minhash_bands(sig, 16, 8));
});
}
$pub->safe_psql(
	'postgres', q{
SELECT pg_create_logical_replication_slot('subtext', 'pgoutput');
SELECT pg_create_logical_replication_slot('subbin', 'pgoutput');
});
my $conninfo = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('subtext',
	"CREATE SUBSCRIPTION subtext CONNECTION '$conninfo' PUBLICATION pub WITH (create_slot = false, slot_name = 'subtext')"
);
$sub->safe_psql('subbin',
	"CREATE SUBSCRIPTION subbin CONNECTION '$conninfo' PUBLICATION pub WITH (create_slot = false, slot_name = 'subbin', binary = true)"
);

# bands_check(DB): minhash_similar through the band index = a seq scan, for
# 50 query signatures; then the plan of one such query.
my $bands_sql = q{
CREATE TEMP TABLE q AS SELECT id, sig FROM docs WHERE id % 400 = 0;
CREATE TEMP TABLE by_seq AS
SELECT q.id AS q, d.id FROM q, LATERAL (SELECT d.id FROM docs d WHERE minhash_similar(d.sig, q.sig, 0.5, 16, 8)) d;
SET enable_seqscan = off;
CREATE TEMP TABLE by_index AS
SELECT q.id AS q, d.id FROM q, LATERAL (SELECT d.id FROM docs d WHERE minhash_similar(d.sig, q.sig, 0.5, 16, 8)) d;
SELECT (SELECT count(*) FROM by_index) || ' found, '
       || (SELECT count(*) FROM ((TABLE by_seq EXCEPT ALL TABLE by_index) UNION ALL (TABLE by_index EXCEPT ALL TABLE by_seq)) x)
       || ' differ';
SELECT sig AS q400 FROM docs WHERE id = 400 \gset
EXPLAIN (COSTS OFF) SELECT d.id FROM docs d WHERE minhash_similar(d.sig, :'q400', 0.5, 16, 8);
};

# check_all(DB, LABEL): DB has the publisher's rows, and each of its
# indexes answers as its sequential scan.
sub check_all
{
	my ($db, $label) = @_;
	is( digest($sub, $db),
		digest($pub, 'postgres'),
		"$label: $db has the publisher's rows");
	# each index alone: the others dropped in a transaction rolled back
	my @indexes = ('docs_ham', 'docs_gin', 'docs_gist');
	for my $idx (@indexes)
	{
		my $others = join(', ', grep { $_ ne $idx } @indexes);
		my $res = psql_out(
			$sub, $db, qq{BEGIN;
DROP INDEX $others;
SELECT nd_check('docs', '$idx',
    ARRAY(SELECT sh FROM docs WHERE id % 997 = 0 OR id IN (100001, 100002)), '{0,3,8}');
ROLLBACK;});
		note "$idx: " . (split / \|/, $res)[0];
		like(
			$res,
			qr/^checks=[1-9][0-9]* mismatches=0 wrong_plans=0$/,
			"$label: ${db}'s $idx answers as its seq scan");
	}
	my $bands = psql_out($sub, $db, $bands_sql);
	my ($summary) = split /\n/, $bands;
	note "docs_bands: $summary";
	ok( $summary =~ /^[1-9][0-9]* found, 0 differ$/
		  && $bands =~ /Bitmap Index Scan on docs_bands/,
		"$label: ${db}'s band index answers minhash_similar as its seq scan");
	return;
}

$sub->wait_for_subscription_sync($pub, 'subtext', 'subtext');
$sub->wait_for_subscription_sync($pub, 'subbin', 'subbin');
check_all('subtext', 'initial copy (text)');
check_all('subbin', 'initial copy (binary)');

# --- ongoing changes ----------------------------------------------------------------
$pub->safe_psql(
	'postgres', q{
INSERT INTO docs (id, body) SELECT i, doc_text(i, 40) FROM generate_series(20001, 25000) i;
UPDATE docs SET sh = simhash(body), sig = minhash(body) WHERE sh IS NULL;
UPDATE docs SET body = body || ' appended', sh = simhash(body || ' appended'), sig = minhash(body || ' appended')
WHERE id % 13 = 0;
DELETE FROM docs WHERE id % 17 = 0;
UPDATE docs SET sh = NULL, sig = NULL WHERE id % 101 = 0;
});
note 'publisher after changes: ' . digest($pub, 'postgres');
$pub->wait_for_catchup('subtext');
$pub->wait_for_catchup('subbin');
check_all('subtext', 'after inserts, updates, deletes (text)');
check_all('subbin', 'after inserts, updates, deletes (binary)');

$sub->stop;
$pub->stop;
done_testing();
