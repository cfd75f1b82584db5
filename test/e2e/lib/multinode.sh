# Several PostgreSQL 15 clusters on this machine: a coordinator and shards
# for the sharding benchmarks (test/bench/run_scale_out.sh and
# test/bench/run_scale_out_blocks.sh).  Source it from a script running as root,
# with ND_STAGE set (test/lib/pgenv.sh: nd_stage).
#
# Each node is a cluster made by initdb and run by pg_ctl as the
# unprivileged postgres user, under one temporary directory, on a free port
# of its own, listening on loopback only with trust authentication there
# (throwaway clusters: nothing else can reach them), loading the staged
# extension through extension_destdir.
#
#   nd_mn_init                 make the temporary directory, EXIT trap stops all
#   nd_node_create NAME [GUC=VALUE ...]   initdb + start; extra settings appended
#   nd_node_standby NAME PRIMARY  a streaming hot standby of PRIMARY (pg_basebackup -R)
#   nd_node_promote NAME       pg_ctl promote, waiting until it accepts writes
#   nd_fdw_server COORD SHARD  on COORD, a postgres_fdw server SHARD for that node
#   nd_node_stop NAME [MODE]   pg_ctl stop (fast by default; immediate for a crash)
#   nd_node_start NAME
#   nd_port NAME               its port
#   nd_log NAME                its server log file
#   nd_psql NAME ARGS...       psql on it (-X -q -At, ON_ERROR_STOP)
#   nd_mn_stop_all             stop every node (the EXIT trap calls it)
#
# Connections go to 127.0.0.1 as user postgres, database postgres.

ND_PGBIN=${ND_PGBIN:-/usr/lib/postgresql/15/bin}
ND_MN_NODES=()

nd_mn_init() {
	ND_MN_DIR=$(mktemp -d /tmp/nd-multinode.XXXXXX)
	chmod 755 "$ND_MN_DIR"
	chown postgres: "$ND_MN_DIR"
	trap 'nd_mn_stop_all; rm -rf "$ND_MN_DIR"; nd_cleanup 2>/dev/null || true' EXIT
}

nd_port() { cat "$ND_MN_DIR/$1/port"; }
nd_log() { echo "$ND_MN_DIR/$1/log"; }

nd_psql() {
	local name=$1
	shift
	psql -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(nd_port "$name")" -U postgres -d postgres "$@"
}

nd_node_create() {
	local name=$1 dir port g
	shift
	dir=$ND_MN_DIR/$name
	mkdir -p "$dir"
	chown postgres: "$dir"
	port=$(nd_free_port)
	echo "$port" >"$dir/port"
	runuser -u postgres -- "$ND_PGBIN/initdb" -D "$dir/data" -U postgres -A trust \
		--encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	{
		echo "port = $port"
		echo "listen_addresses = '127.0.0.1'"
		echo "unix_socket_directories = '$dir'"
		echo "extension_destdir = '$ND_STAGE'"
		echo "lc_messages = 'C'"
		echo "fsync = off"
		echo "max_parallel_workers_per_gather = 0"
		for g in "$@"; do echo "${g%%=*} = '${g#*=}'"; done
	} | runuser -u postgres -- tee -a "$dir/data/postgresql.conf" >/dev/null
	# Loopback only, trust: these clusters live as long as the script.
	printf 'local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n' |
		runuser -u postgres -- tee "$dir/data/pg_hba.conf" >/dev/null
	ND_MN_NODES+=("$name")
	nd_node_start "$name"
}

nd_node_standby() {
	local name=$1 primary=$2 dir port
	dir=$ND_MN_DIR/$name
	mkdir -p "$dir"
	chown postgres: "$dir"
	port=$(nd_free_port)
	echo "$port" >"$dir/port"
	runuser -u postgres -- "$ND_PGBIN/pg_basebackup" -h 127.0.0.1 -p "$(nd_port "$primary")" -U postgres \
		-D "$dir/data" -X stream -R -c fast >"$dir/basebackup.log" 2>&1 ||
		{ cat "$dir/basebackup.log" >&2; return 1; }
	{
		echo "port = $port"
		echo "unix_socket_directories = '$dir'"
		echo "hot_standby = on"
	} | runuser -u postgres -- tee -a "$dir/data/postgresql.conf" >/dev/null
	ND_MN_NODES+=("$name")
	nd_node_start "$name"
}

nd_node_promote() {
	runuser -u postgres -- "$ND_PGBIN/pg_ctl" -D "$ND_MN_DIR/$1/data" -w promote >/dev/null
}

nd_fdw_server() {
	nd_psql "$1" -c "SET client_min_messages = warning" \
		-c "CREATE SERVER IF NOT EXISTS $2 FOREIGN DATA WRAPPER postgres_fdw
		    OPTIONS (host '127.0.0.1', port '$(nd_port "$2")', dbname 'postgres',
		             extensions 'neardup', async_capable 'true', fetch_size '${ND_FETCH_SIZE:-100}', batch_size '1000')" \
		-c "CREATE USER MAPPING IF NOT EXISTS FOR CURRENT_USER SERVER $2 OPTIONS (user 'postgres')"
}

nd_node_start() {
	runuser -u postgres -- "$ND_PGBIN/pg_ctl" -D "$ND_MN_DIR/$1/data" -l "$ND_MN_DIR/$1/log" -w start >/dev/null
}

nd_node_stop() {
	runuser -u postgres -- "$ND_PGBIN/pg_ctl" -D "$ND_MN_DIR/$1/data" -m "${2:-fast}" -w stop >/dev/null
}

nd_mn_stop_all() {
	local name
	for name in "${ND_MN_NODES[@]}"; do
		if [ -f "$ND_MN_DIR/$name/data/postmaster.pid" ]; then
			nd_node_stop "$name" immediate 2>/dev/null || true
		fi
	done
}

# nd_shard_cluster COORD TABLE SHARD... : on every shard S, the extension and
# table TABLE_S (id bigint PRIMARY KEY, sh simhash64) with a GIN index (radius
# search) and a GiST index (KNN); the shard's name in its table's name makes
# the remote SQL that postgres_fdw quotes in its errors name the shard (a
# connection lost in the middle of a transaction is otherwise reported
# without the server's name).  On COORD, the extension, postgres_fdw, one
# foreign server per shard (extensions 'neardup': the extension's operators
# and functions are shipped; async_capable: shards scanned concurrently;
# fetch_size ND_FETCH_SIZE, default 100: rows per round trip, and what a
# shard computes ahead of a Merge Append that needs only a few) and
# TABLE hash-partitioned by id with one foreign partition per shard.
nd_shard_cluster() {
	local coord=$1 tbl=$2 i=0 s
	shift 2
	local nshards=$#
	nd_psql "$coord" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS neardup" \
		-c "CREATE EXTENSION IF NOT EXISTS postgres_fdw" \
		-c "CREATE TABLE $tbl (id bigint NOT NULL, sh simhash64) PARTITION BY HASH (id)"
	for s in "$@"; do
		nd_psql "$s" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS neardup" \
			-c "CREATE TABLE ${tbl}_$s (id bigint PRIMARY KEY, sh simhash64)"
		[ -n "${ND_DEFER_INDEXES:-}" ] || nd_shard_indexes "$tbl" "$s"
		nd_fdw_server "$coord" "$s"
		nd_psql "$coord" -c "CREATE FOREIGN TABLE ${tbl}_$s PARTITION OF $tbl
			    FOR VALUES WITH (MODULUS $nshards, REMAINDER $i)
			    SERVER $s OPTIONS (table_name '${tbl}_$s')"
		i=$((i + 1))
	done
}

# nd_shard_indexes TABLE SHARD...: the indexes of each shard's table, named
# TABLE_SHARD_AM, for the access methods in ND_INDEXES (default "gin gist";
# nd_shard_cluster builds them at once unless ND_DEFER_INDEXES is set, for a
# load before the build).
nd_shard_indexes() {
	local tbl=$1 s am
	shift
	for s in "$@"; do
		for am in ${ND_INDEXES:-gin gist}; do
			nd_psql "$s" -c "CREATE INDEX ${tbl}_${s}_$am ON ${tbl}_$s USING $am (sh)"
		done
	done
}
