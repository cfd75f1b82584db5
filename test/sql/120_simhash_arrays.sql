--
-- simhash() of caller-supplied features: text[], bigint[] (pre-hashed),
-- with and without real[] weights.
--

SELECT simhash(ARRAY['apple', 'banana', 'cherry']);
SELECT simhash(ARRAY['apple', 'banana', 'cherry'], seed => 7);
-- A bag: order does not matter, duplicates weigh more, NULLs are skipped.
SELECT simhash(ARRAY['a', 'b', 'c']) = simhash(ARRAY['c', 'a', 'b']) AS order_free;
SELECT simhash(ARRAY['a', 'b', NULL, 'c', NULL]) = simhash(ARRAY['a', 'b', 'c']) AS nulls_skipped;
SELECT simhash(ARRAY['a', 'a', 'b']) = simhash(ARRAY['a', 'b'], ARRAY[2, 1]::real[]) AS duplicates_are_weights;
-- Features are taken as given (no folding).
SELECT simhash(ARRAY['Apple']) = simhash(ARRAY['apple']) AS case_sensitive;
-- No features, no fingerprint.
SELECT simhash(ARRAY[]::text[]) IS NULL AS empty, simhash(ARRAY[NULL, NULL]::text[]) IS NULL AS all_null;

-- Weights: unit weights are the plain count; zero and NULL weights drop a
-- feature; negative weights vote against it.
SELECT simhash(ARRAY['a', 'b', 'c'], ARRAY[1, 1, 1]::real[]) = simhash(ARRAY['a', 'b', 'c']) AS unit_weights;
SELECT simhash(ARRAY['a', 'b', 'c'], ARRAY[1, 0, 1]::real[]) = simhash(ARRAY['a', 'c']) AS zero_weight;
SELECT simhash(ARRAY['a', 'b', 'c'], ARRAY[1, NULL, 1]::real[]) = simhash(ARRAY['a', 'c']) AS null_weight;
SELECT simhash(ARRAY['a'], ARRAY[-1]::real[]) = (~ simhash(ARRAY['a'])::bigint)::simhash64 AS negative_weight;
SELECT simhash(ARRAY['a', 'b'], ARRAY[0, 0]::real[]) IS NULL AS all_zero;
SELECT simhash(ARRAY['x', 'y', 'z'], ARRAY[0.5, 2.25, 1e-3]::real[]);

-- Pre-hashed features vote with their own bits (simhash-py's compute()).
SELECT simhash(ARRAY[1, 2, 3]::bigint[]);
SELECT simhash(ARRAY[1, 2]::bigint[]);
SELECT simhash(ARRAY[-1]::bigint[]);
SELECT simhash(ARRAY[x]) = x::simhash64 AS one_feature_is_itself
FROM (VALUES (0::bigint), (1), (-1), (9223372036854775807), (-9223372036854775808), (1234567890123)) v(x);
SELECT simhash(ARRAY[1, 2]::bigint[], ARRAY[2, 1]::real[]);
SELECT simhash(ARRAY[1, NULL, 3]::bigint[]) = simhash(ARRAY[1, 3]::bigint[]) AS nulls_skipped;
SELECT simhash(ARRAY[]::bigint[]) IS NULL AS empty;

-- Bad input: clear errors with SQLSTATEs.
\set VERBOSITY sqlstate
SELECT simhash(ARRAY['a', 'b'], ARRAY[1]::real[]);
SELECT simhash(ARRAY['a'], ARRAY[1, 2]::real[]);
SELECT simhash(ARRAY['a', 'b'], ARRAY[1, 'NaN']::real[]);
SELECT simhash(ARRAY['a', 'b'], ARRAY[1, 'Infinity']::real[]);
SELECT simhash(ARRAY[['a', 'b'], ['c', 'd']]);
SELECT simhash(ARRAY['a', 'b'], ARRAY[[1, 2]]::real[]);
SELECT simhash(ARRAY[[1, 2], [3, 4]]::bigint[]);
SELECT simhash(ARRAY[1, 2]::bigint[], ARRAY[1]::real[]);
SELECT simhash(ARRAY[1]::bigint[], ARRAY['-Infinity']::real[]);
\set VERBOSITY default
SELECT simhash(ARRAY['a', 'b'], ARRAY[1]::real[]);
SELECT simhash(ARRAY['a', 'b'], ARRAY[1, 'NaN']::real[]);
SELECT simhash(ARRAY[['a', 'b'], ['c', 'd']]);
-- STRICT
SELECT simhash(NULL::text[]) IS NULL, simhash(ARRAY['a'], NULL::real[]) IS NULL, simhash(NULL::bigint[]) IS NULL;
