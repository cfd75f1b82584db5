# NeardupShards: a coordinator and shards for neardup's multi-node TAP tests
# (test/tap/t/02*.pl), all nodes of PostgreSQL::Test::Cluster on this
# machine.  The coordinator reaches each shard through postgres_fdw over
# the shard's Unix socket, where the framework's nodes trust their own user.
#
#   nd_start_node(NAME, %opts)   a node (NeardupTAP's nd_node) with
#                                max_parallel_workers_per_gather = 0 (plans
#                                without Gather nodes), started; options:
#                                conf => more postgresql.conf lines;
#                                allows_streaming => 1, a node that can have
#                                a standby (with the usual shared_buffers and
#                                max_connections, not the framework's
#                                smaller ones for such nodes)
#   nd_coordinator(COORD, SHARDS...)
#                                on COORD: neardup, postgres_fdw, a foreign
#                                server per shard node (nd_fdw_server) and
#                                the helpers of index_check.sql
#   nd_fdw_server(COORD, SHARD)  on COORD, foreign server SHARD->name for that
#                                node, with a user mapping for the current
#                                user: extensions 'neardup' (the extension's
#                                operators and functions are shipped),
#                                async_capable (shards scanned concurrently),
#                                fetch_size 100 (rows per round trip),
#                                batch_size 1000 (rows per remote INSERT)
#   nd_server_of(COORD, TABLE)   the server of foreign table TABLE on COORD
#   nd_sql(NODE, SQL)            runs SQL in database postgres, stopping at
#                                the first error: its output, then what it
#                                wrote to stderr (errors, notices), as one
#                                text; in list context also psql's exit code
#   nd_error(NODE, SQL)          runs SQL so: the first line it wrote to
#                                stderr (its error, verbose: with the
#                                SQLSTATE), or ''
#   nd_lines(TEXT, RE)           how many lines of TEXT match RE
package NeardupShards;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use NeardupTAP;

our @EXPORT =
  qw(nd_start_node nd_coordinator nd_fdw_server nd_server_of nd_sql nd_error
  nd_lines);

sub nd_start_node
{
	my ($name, %opts) = @_;
	my $node =
	  nd_node($name, allows_streaming => $opts{allows_streaming} // 0);
	my $conf = "max_parallel_workers_per_gather = 0\n";
	$conf .= "shared_buffers = 128MB\nmax_connections = 100\n"
	  if $opts{allows_streaming};
	$conf .= $opts{conf} // '';
	$node->append_conf('postgresql.conf', $conf);
	$node->start;
	return $node;
}

sub nd_coordinator
{
	my ($coord, @shards) = @_;
	$coord->safe_psql(
		'postgres', q{
		SET client_min_messages = warning;
		CREATE EXTENSION neardup;
		CREATE EXTENSION postgres_fdw;
	});
	nd_fdw_server($coord, $_) for @shards;
	nd_sql_lib($coord, 'index_check.sql');
	return;
}

sub nd_fdw_server
{
	my ($coord, $shard) = @_;
	my ($name, $host, $port) = ($shard->name, $shard->host, $shard->port);
	$coord->safe_psql(
		'postgres', qq{
		CREATE SERVER $name FOREIGN DATA WRAPPER postgres_fdw
		  OPTIONS (host '$host', port '$port', dbname 'postgres',
		           extensions 'neardup', async_capable 'true',
		           fetch_size '100', batch_size '1000');
		CREATE USER MAPPING FOR CURRENT_USER SERVER $name;
	});
	return;
}

sub nd_server_of
{
	my ($coord, $table) = @_;
	return $coord->safe_psql(
		'postgres', qq{
		SELECT s.srvname FROM pg_foreign_table f
		  JOIN pg_foreign_server s ON s.oid = f.ftserver
		WHERE f.ftrelid = '$table'::regclass});
}

sub nd_sql
{
	my ($node, $sql) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', $sql);
	my $all = join("\n", grep { $_ ne '' } $out, $err);
	return wantarray ? ($rc, $all) : $all;
}

sub nd_error
{
	my ($node, $sql) = @_;
	my ($rc, $out, $err) =
	  $node->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	return (split /\n/, $err)[0] // '';
}

sub nd_lines
{
	my ($text, $re) = @_;
	return scalar grep { /$re/ } split /\n/, $text;
}

1;
