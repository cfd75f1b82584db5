-- One kind of night of test/bench/clusters_update.sql: simhash_clusters_update
-- with :new new rows (a third random, a third exact copies of old rows, a
-- third 1 or 2 bits off; :near_group of them near the large group) and
-- :gone deleted rows, against the full run of the same night (since NULL:
-- simhash_clusters over the table, applied as a difference) and a bare
-- simhash_clusters.  The runner then runs lib/clusters_update_round.sql
-- a few times and lib/clusters_update_report.sql.
\set q_inc 'SELECT count(*) FROM simhash_clusters_update(''u_state'', ''u'', ''id'', ''sh'', ' :last_id ')'
\set q_inc_log 'SELECT count(*) FROM simhash_clusters_update(''u_state'', ''u'', ''id'', ''sh'', ' :last_id ', deleted => ARRAY(SELECT (hashint8extended(i, 25) & 1048575) % ' :rows ' + 1 FROM generate_series(1, ' :gone ') i))'
\set q_full 'SELECT count(*) FROM simhash_clusters_update(''u_state'', ''u'', ''id'', ''sh'', NULL)'
\set q_bare 'SELECT count(*) FROM simhash_clusters(''u'', ''id'', ''sh'')'
SELECT :'q_inc' AS q_inc, :'q_inc_log' AS q_inc_log, :'q_full' AS q_full, :'q_bare' AS q_bare \gset
