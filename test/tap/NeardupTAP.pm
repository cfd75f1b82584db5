# NeardupTAP: the shared part of neardup's TAP tests (test/tap/t/*.pl),
# which run with PostgreSQL's own framework (PostgreSQL::Test::Cluster) on
# every major; test/tap/run.sh sets the environment they read.
#
#   nd_node(NAME, %init)       a node, initialized (init's parameters, such as
#                              allows_streaming => 1), its server loading the
#                              neardup under test; not started
#   nd_sql_lib(NODE, FILE)     runs FILE of the shared SQL helpers
#                              (test/e2e/lib) in database postgres
#   nd_major()                 the server's major, as a number
#
# Environment (test/tap/run.sh): ND_EXTENSION_DESTDIR, the staging directory
# of a Debian server (its extension_destdir); ND_TEST_LIB, the SQL helpers'
# directory; ND_PG_MAJOR, the major the run asked for; ND_DEFAULT_VERSION,
# the control file's default_version.
package NeardupTAP;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(nd_node nd_sql_lib nd_major);

sub nd_node
{
	my ($name, %init) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%init);
	my $conf = "lc_messages = 'C'\n";
	$conf .= "extension_destdir = '$ENV{ND_EXTENSION_DESTDIR}'\n"
	  if $ENV{ND_EXTENSION_DESTDIR};
	$node->append_conf('postgresql.conf', $conf);
	return $node;
}

sub nd_sql_lib
{
	my ($node, $file) = @_;
	$node->safe_psql('postgres', slurp_file("$ENV{ND_TEST_LIB}/$file"));
	return;
}

sub nd_major
{
	my $v = `pg_config --version`;
	$v =~ /PostgreSQL (\d+)/ or die "pg_config --version: $v";
	return $1;
}

1;
