/* neardup install script, version 0.1 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION neardup" to load this file. \quit

/*
 * Safety against search_path tricks: every object is created in
 * @extschema@ explicitly, every reference to a built-in object is
 * schema-qualified with pg_catalog, and SQL-language bodies pin their
 * search_path.  See doc/security.md.
 */

-- ===== section: simhash64 type (src/simhash64_type.c) =====

/*
 * simhash64: a 64-bit fingerprint, passed by value like int8.  Text form:
 * exactly 16 hex digits.  Ordered as an unsigned integer, so that ORDER BY
 * agrees with the text form.  Category 'U' (user-defined), not numeric: no
 * implicit casts and no surprises in operator resolution.
 */
CREATE TYPE @extschema@.simhash64;

CREATE FUNCTION @extschema@.simhash64_in(pg_catalog.cstring)
RETURNS @extschema@.simhash64
AS 'MODULE_PATHNAME', 'simhash64_in'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash64_out(@extschema@.simhash64)
RETURNS pg_catalog.cstring
AS 'MODULE_PATHNAME', 'simhash64_out'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash64_recv(pg_catalog.internal)
RETURNS @extschema@.simhash64
AS 'MODULE_PATHNAME', 'simhash64_recv'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash64_send(@extschema@.simhash64)
RETURNS pg_catalog.bytea
AS 'MODULE_PATHNAME', 'simhash64_send'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE @extschema@.simhash64 (
    INPUT = @extschema@.simhash64_in,
    OUTPUT = @extschema@.simhash64_out,
    RECEIVE = @extschema@.simhash64_recv,
    SEND = @extschema@.simhash64_send,
    INTERNALLENGTH = 8,
    PASSEDBYVALUE,
    ALIGNMENT = double,
    STORAGE = plain,
    CATEGORY = 'U'
);

COMMENT ON TYPE @extschema@.simhash64 IS '64-bit SimHash fingerprint, written as 16 hex digits';

-- Casts, all explicit.  bigint: the same 64 bits (two's complement reading).
CREATE CAST (pg_catalog.int8 AS @extschema@.simhash64) WITHOUT FUNCTION;
CREATE CAST (@extschema@.simhash64 AS pg_catalog.int8) WITHOUT FUNCTION;

-- Bit strings, most significant bit first.  The casts to bit strings take
-- the target typmod, to refuse lengths that would truncate.
CREATE FUNCTION @extschema@.simhash64_to_bit(@extschema@.simhash64, pg_catalog.int4)
RETURNS pg_catalog.bit
AS 'MODULE_PATHNAME', 'simhash64_to_bit'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash64_to_varbit(@extschema@.simhash64, pg_catalog.int4)
RETURNS pg_catalog.varbit
AS 'MODULE_PATHNAME', 'simhash64_to_varbit'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash64_from_bit(pg_catalog.varbit)
RETURNS @extschema@.simhash64
AS 'MODULE_PATHNAME', 'simhash64_from_bit'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE CAST (@extschema@.simhash64 AS pg_catalog.bit)
    WITH FUNCTION @extschema@.simhash64_to_bit(@extschema@.simhash64, pg_catalog.int4);
CREATE CAST (@extschema@.simhash64 AS pg_catalog.varbit)
    WITH FUNCTION @extschema@.simhash64_to_varbit(@extschema@.simhash64, pg_catalog.int4);
-- bit is binary-coercible to varbit, so one function serves both.
CREATE CAST (pg_catalog.bit AS @extschema@.simhash64)
    WITH FUNCTION @extschema@.simhash64_from_bit(pg_catalog.varbit);
CREATE CAST (pg_catalog.varbit AS @extschema@.simhash64)
    WITH FUNCTION @extschema@.simhash64_from_bit(pg_catalog.varbit);

-- bytea: 8 bytes, big-endian.
CREATE FUNCTION @extschema@.simhash64_to_bytea(@extschema@.simhash64)
RETURNS pg_catalog.bytea
AS 'MODULE_PATHNAME', 'simhash64_to_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash64_from_bytea(pg_catalog.bytea)
RETURNS @extschema@.simhash64
AS 'MODULE_PATHNAME', 'simhash64_from_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE CAST (@extschema@.simhash64 AS pg_catalog.bytea)
    WITH FUNCTION @extschema@.simhash64_to_bytea(@extschema@.simhash64);
CREATE CAST (pg_catalog.bytea AS @extschema@.simhash64)
    WITH FUNCTION @extschema@.simhash64_from_bytea(pg_catalog.bytea);

-- Comparison (unsigned).  These never fail, hence LEAKPROOF: usable under
-- row-level security and security-barrier views.
CREATE FUNCTION @extschema@.simhash64_eq(@extschema@.simhash64, @extschema@.simhash64)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash64_eq'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION @extschema@.simhash64_ne(@extschema@.simhash64, @extschema@.simhash64)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash64_ne'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION @extschema@.simhash64_lt(@extschema@.simhash64, @extschema@.simhash64)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash64_lt'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION @extschema@.simhash64_le(@extschema@.simhash64, @extschema@.simhash64)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash64_le'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION @extschema@.simhash64_gt(@extschema@.simhash64, @extschema@.simhash64)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash64_gt'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION @extschema@.simhash64_ge(@extschema@.simhash64, @extschema@.simhash64)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash64_ge'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR @extschema@.= (
    LEFTARG = @extschema@.simhash64,
    RIGHTARG = @extschema@.simhash64,
    FUNCTION = @extschema@.simhash64_eq,
    COMMUTATOR = OPERATOR(@extschema@.=),
    NEGATOR = OPERATOR(@extschema@.<>),
    RESTRICT = pg_catalog.eqsel,
    JOIN = pg_catalog.eqjoinsel,
    HASHES, MERGES
);

CREATE OPERATOR @extschema@.<> (
    LEFTARG = @extschema@.simhash64,
    RIGHTARG = @extschema@.simhash64,
    FUNCTION = @extschema@.simhash64_ne,
    COMMUTATOR = OPERATOR(@extschema@.<>),
    NEGATOR = OPERATOR(@extschema@.=),
    RESTRICT = pg_catalog.neqsel,
    JOIN = pg_catalog.neqjoinsel
);

CREATE OPERATOR @extschema@.< (
    LEFTARG = @extschema@.simhash64,
    RIGHTARG = @extschema@.simhash64,
    FUNCTION = @extschema@.simhash64_lt,
    COMMUTATOR = OPERATOR(@extschema@.>),
    NEGATOR = OPERATOR(@extschema@.>=),
    RESTRICT = pg_catalog.scalarltsel,
    JOIN = pg_catalog.scalarltjoinsel
);

CREATE OPERATOR @extschema@.<= (
    LEFTARG = @extschema@.simhash64,
    RIGHTARG = @extschema@.simhash64,
    FUNCTION = @extschema@.simhash64_le,
    COMMUTATOR = OPERATOR(@extschema@.>=),
    NEGATOR = OPERATOR(@extschema@.>),
    RESTRICT = pg_catalog.scalarlesel,
    JOIN = pg_catalog.scalarlejoinsel
);

CREATE OPERATOR @extschema@.> (
    LEFTARG = @extschema@.simhash64,
    RIGHTARG = @extschema@.simhash64,
    FUNCTION = @extschema@.simhash64_gt,
    COMMUTATOR = OPERATOR(@extschema@.<),
    NEGATOR = OPERATOR(@extschema@.<=),
    RESTRICT = pg_catalog.scalargtsel,
    JOIN = pg_catalog.scalargtjoinsel
);

CREATE OPERATOR @extschema@.>= (
    LEFTARG = @extschema@.simhash64,
    RIGHTARG = @extschema@.simhash64,
    FUNCTION = @extschema@.simhash64_ge,
    COMMUTATOR = OPERATOR(@extschema@.<=),
    NEGATOR = OPERATOR(@extschema@.<),
    RESTRICT = pg_catalog.scalargesel,
    JOIN = pg_catalog.scalargejoinsel
);

-- btree: ORDER BY, DISTINCT, UNIQUE, merge joins, indexes.
CREATE FUNCTION @extschema@.simhash64_cmp(@extschema@.simhash64, @extschema@.simhash64)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'simhash64_cmp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION @extschema@.simhash64_sortsupport(pg_catalog.internal)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'simhash64_sortsupport'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Support 4 (equal values are bitwise equal) enables index deduplication.
CREATE OPERATOR CLASS @extschema@.simhash64_ops
    DEFAULT FOR TYPE @extschema@.simhash64 USING btree AS
    OPERATOR 1 @extschema@.< ,
    OPERATOR 2 @extschema@.<= ,
    OPERATOR 3 @extschema@.= ,
    OPERATOR 4 @extschema@.>= ,
    OPERATOR 5 @extschema@.> ,
    FUNCTION 1 @extschema@.simhash64_cmp(@extschema@.simhash64, @extschema@.simhash64),
    FUNCTION 2 @extschema@.simhash64_sortsupport(pg_catalog.internal),
    FUNCTION 4 pg_catalog.btequalimage(pg_catalog.oid);

-- hash: hash joins, hash aggregation, hash indexes and hash partitioning.
CREATE FUNCTION @extschema@.simhash64_hash(@extschema@.simhash64)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'simhash64_hash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash64_hash_extended(@extschema@.simhash64, pg_catalog.int8)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'simhash64_hash_extended'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR CLASS @extschema@.simhash64_ops
    DEFAULT FOR TYPE @extschema@.simhash64 USING hash AS
    OPERATOR 1 @extschema@.= ,
    FUNCTION 1 @extschema@.simhash64_hash(@extschema@.simhash64),
    FUNCTION 2 @extschema@.simhash64_hash_extended(@extschema@.simhash64, pg_catalog.int8);

-- ===== end section: simhash64 type =====

-- ===== section: hamming (src/hamming.c) =====

-- Number of differing bits, 0..64.  Never fails, hence LEAKPROOF.
CREATE FUNCTION @extschema@.hamming_distance(a @extschema@.simhash64, b @extschema@.simhash64)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'hamming_distance'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

COMMENT ON FUNCTION @extschema@.hamming_distance(@extschema@.simhash64, @extschema@.simhash64)
    IS 'number of bits in which two fingerprints differ (0..64)';

-- The same distance as an operator.  Its function is separate from
-- hamming_distance() so that a planner support function can be attached
-- to it alone.
CREATE FUNCTION @extschema@.simhash64_hamming(@extschema@.simhash64, @extschema@.simhash64)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'simhash64_hamming'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR @extschema@.<~> (
    LEFTARG = @extschema@.simhash64,
    RIGHTARG = @extschema@.simhash64,
    FUNCTION = @extschema@.simhash64_hamming,
    COMMUTATOR = OPERATOR(@extschema@.<~>)
);

COMMENT ON OPERATOR @extschema@.<~> (@extschema@.simhash64, @extschema@.simhash64)
    IS 'Hamming distance';

-- 1 - distance/64: 1 for equal fingerprints, 0 for complementary ones.
CREATE FUNCTION @extschema@.simhash_similarity(a @extschema@.simhash64, b @extschema@.simhash64)
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'simhash_similarity'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

COMMENT ON FUNCTION @extschema@.simhash_similarity(@extschema@.simhash64, @extschema@.simhash64)
    IS '1 - hamming_distance/64';

-- ===== end section: hamming =====

-- ===== section: hamming ball (src/hamming_ball.c) =====

/*
 * hamming_ball: every simhash64 within `radius` bits of `center`.
 * `sh <@ hamming_ball(q, r)` is the indexable form of `sh <~> q <= r`.
 */
CREATE TYPE @extschema@.hamming_ball;

CREATE FUNCTION @extschema@.hamming_ball_in(pg_catalog.cstring)
RETURNS @extschema@.hamming_ball
AS 'MODULE_PATHNAME', 'hamming_ball_in'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.hamming_ball_out(@extschema@.hamming_ball)
RETURNS pg_catalog.cstring
AS 'MODULE_PATHNAME', 'hamming_ball_out'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.hamming_ball_recv(pg_catalog.internal)
RETURNS @extschema@.hamming_ball
AS 'MODULE_PATHNAME', 'hamming_ball_recv'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.hamming_ball_send(@extschema@.hamming_ball)
RETURNS pg_catalog.bytea
AS 'MODULE_PATHNAME', 'hamming_ball_send'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE @extschema@.hamming_ball (
    INPUT = @extschema@.hamming_ball_in,
    OUTPUT = @extschema@.hamming_ball_out,
    RECEIVE = @extschema@.hamming_ball_recv,
    SEND = @extschema@.hamming_ball_send,
    INTERNALLENGTH = 16,
    ALIGNMENT = double,
    STORAGE = plain
);

COMMENT ON TYPE @extschema@.hamming_ball IS 'all simhash64 values within a Hamming radius of a center';

-- Radii below 0 hold nothing, radii above 64 everything (stored as -1, 64).
CREATE FUNCTION @extschema@.hamming_ball(center @extschema@.simhash64, radius pg_catalog.int4)
RETURNS @extschema@.hamming_ball
AS 'MODULE_PATHNAME', 'hamming_ball_make'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.center(@extschema@.hamming_ball)
RETURNS @extschema@.simhash64
AS 'MODULE_PATHNAME', 'hamming_ball_center'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION @extschema@.radius(@extschema@.hamming_ball)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'hamming_ball_radius'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION @extschema@.simhash64_within_ball(@extschema@.simhash64, @extschema@.hamming_ball)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash64_within_ball'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION @extschema@.hamming_ball_contains(@extschema@.hamming_ball, @extschema@.simhash64)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'hamming_ball_contains_simhash64'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR @extschema@.<@ (
    LEFTARG = @extschema@.simhash64,
    RIGHTARG = @extschema@.hamming_ball,
    FUNCTION = @extschema@.simhash64_within_ball,
    COMMUTATOR = OPERATOR(@extschema@.@>),
    RESTRICT = pg_catalog.contsel,
    JOIN = pg_catalog.contjoinsel
);

CREATE OPERATOR @extschema@.@> (
    LEFTARG = @extschema@.hamming_ball,
    RIGHTARG = @extschema@.simhash64,
    FUNCTION = @extschema@.hamming_ball_contains,
    COMMUTATOR = OPERATOR(@extschema@.<@),
    RESTRICT = pg_catalog.contsel,
    JOIN = pg_catalog.contjoinsel
);

-- within(a, b, radius): the function form of a <~> b <= radius.
CREATE FUNCTION @extschema@.within(a @extschema@.simhash64, b @extschema@.simhash64, radius pg_catalog.int4)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash64_within'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

-- ===== end section: hamming ball =====

-- ===== section: text features (src/text_features.c) =====

-- What the fingerprints see: tokens, shingles and their hashes.
CREATE FUNCTION @extschema@.text_tokens(doc pg_catalog.text, unit pg_catalog.text DEFAULT 'word')
RETURNS pg_catalog.text[]
AS 'MODULE_PATHNAME', 'nd_text_tokens'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.text_shingles(doc pg_catalog.text, shingle pg_catalog.int4 DEFAULT 3,
                                          unit pg_catalog.text DEFAULT 'word')
RETURNS pg_catalog.text[]
AS 'MODULE_PATHNAME', 'nd_text_shingles'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.shingle_hashes(doc pg_catalog.text, shingle pg_catalog.int4 DEFAULT 3,
                                           unit pg_catalog.text DEFAULT 'word',
                                           seed pg_catalog.int8 DEFAULT 0)
RETURNS pg_catalog.int8[]
AS 'MODULE_PATHNAME', 'nd_shingle_hashes'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- ===== end section: text features =====

-- ===== section: simhash fingerprints (src/simhash_text.c, simhash_arrays.c, simhash_agg.c, simhash_tsvector.c) =====

CREATE FUNCTION @extschema@.simhash(doc pg_catalog.text, shingle pg_catalog.int4 DEFAULT 3,
                                    unit pg_catalog.text DEFAULT 'word',
                                    seed pg_catalog.int8 DEFAULT 0)
RETURNS @extschema@.simhash64
AS 'MODULE_PATHNAME', 'nd_simhash_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

CREATE FUNCTION @extschema@.simhash(features pg_catalog.text[], seed pg_catalog.int8 DEFAULT 0)
RETURNS @extschema@.simhash64
AS 'MODULE_PATHNAME', 'nd_simhash_text_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash(features pg_catalog.text[], weights pg_catalog.float4[],
                                    seed pg_catalog.int8 DEFAULT 0)
RETURNS @extschema@.simhash64
AS 'MODULE_PATHNAME', 'nd_simhash_text_array_weighted'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash(features pg_catalog.int8[])
RETURNS @extschema@.simhash64
AS 'MODULE_PATHNAME', 'nd_simhash_int8_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash(features pg_catalog.int8[], weights pg_catalog.float4[])
RETURNS @extschema@.simhash64
AS 'MODULE_PATHNAME', 'nd_simhash_int8_array_weighted'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash(doc pg_catalog.tsvector, shingle pg_catalog.int4 DEFAULT 3,
                                    seed pg_catalog.int8 DEFAULT 0)
RETURNS @extschema@.simhash64
AS 'MODULE_PATHNAME', 'nd_simhash_tsvector'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- simhash_agg(feature text [, weight real]): parallel-safe aggregate
CREATE FUNCTION @extschema@.simhash_agg_trans(pg_catalog.internal, pg_catalog.text, pg_catalog.float4)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'nd_simhash_agg_trans_weighted'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash_agg_trans(pg_catalog.internal, pg_catalog.text)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'nd_simhash_agg_trans'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash_agg_final(pg_catalog.internal)
RETURNS @extschema@.simhash64
AS 'MODULE_PATHNAME', 'nd_simhash_agg_final'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash_agg_combine(pg_catalog.internal, pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'nd_simhash_agg_combine'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash_agg_serialize(pg_catalog.internal)
RETURNS pg_catalog.bytea
AS 'MODULE_PATHNAME', 'nd_simhash_agg_serialize'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash_agg_deserialize(pg_catalog.bytea, pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'nd_simhash_agg_deserialize'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE @extschema@.simhash_agg(feature pg_catalog.text, weight pg_catalog.float4) (
    SFUNC = @extschema@.simhash_agg_trans,
    STYPE = pg_catalog.internal,
    SSPACE = 528,
    FINALFUNC = @extschema@.simhash_agg_final,
    COMBINEFUNC = @extschema@.simhash_agg_combine,
    SERIALFUNC = @extschema@.simhash_agg_serialize,
    DESERIALFUNC = @extschema@.simhash_agg_deserialize,
    PARALLEL = SAFE
);

CREATE AGGREGATE @extschema@.simhash_agg(feature pg_catalog.text) (
    SFUNC = @extschema@.simhash_agg_trans,
    STYPE = pg_catalog.internal,
    SSPACE = 528,
    FINALFUNC = @extschema@.simhash_agg_final,
    COMBINEFUNC = @extschema@.simhash_agg_combine,
    SERIALFUNC = @extschema@.simhash_agg_serialize,
    DESERIALFUNC = @extschema@.simhash_agg_deserialize,
    PARALLEL = SAFE
);

-- ===== end section: simhash fingerprints =====

-- ===== section: index gist (src/index/gist_hamming.c) =====

/*
 * GiST over simhash64: exact radius search (sh <@ hamming_ball(q, r)),
 * exact nearest neighbours (ORDER BY sh <~> q), and equality.  A key is the
 * AND and the OR of the codes below it; the bits they fix give a lower
 * bound of the distance to every one of them.  See doc/index-gist.md.
 */
CREATE TYPE @extschema@.simhash64_gist_key;

CREATE FUNCTION @extschema@.simhash64_gist_key_in(pg_catalog.cstring)
RETURNS @extschema@.simhash64_gist_key
AS 'MODULE_PATHNAME', 'simhash64_gist_key_in'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash64_gist_key_out(@extschema@.simhash64_gist_key)
RETURNS pg_catalog.cstring
AS 'MODULE_PATHNAME', 'simhash64_gist_key_out'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Internal to the index: prints as (AND,OR) in hex, cannot be typed in.
CREATE TYPE @extschema@.simhash64_gist_key (
    INPUT = @extschema@.simhash64_gist_key_in,
    OUTPUT = @extschema@.simhash64_gist_key_out,
    INTERNALLENGTH = 16,
    ALIGNMENT = double,
    STORAGE = plain
);

COMMENT ON TYPE @extschema@.simhash64_gist_key IS 'GiST key of simhash64_gist_ops: AND and OR of the codes below';

CREATE FUNCTION @extschema@.gist_simhash64_consistent(pg_catalog.internal, @extschema@.simhash64,
                                                      pg_catalog.int2, pg_catalog.oid, pg_catalog.internal)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'gist_simhash64_consistent'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.gist_simhash64_distance(pg_catalog.internal, @extschema@.simhash64,
                                                    pg_catalog.int2, pg_catalog.oid, pg_catalog.internal)
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'gist_simhash64_distance'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.gist_simhash64_compress(pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'gist_simhash64_compress'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.gist_simhash64_fetch(pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'gist_simhash64_fetch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.gist_simhash64_union(pg_catalog.internal, pg_catalog.internal)
RETURNS @extschema@.simhash64_gist_key
AS 'MODULE_PATHNAME', 'gist_simhash64_union'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.gist_simhash64_same(@extschema@.simhash64_gist_key,
                                                @extschema@.simhash64_gist_key, pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'gist_simhash64_same'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.gist_simhash64_penalty(pg_catalog.internal, pg_catalog.internal,
                                                   pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'gist_simhash64_penalty'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.gist_simhash64_picksplit(pg_catalog.internal, pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'gist_simhash64_picksplit'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.gist_simhash64_sortsupport(pg_catalog.internal)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'gist_simhash64_sortsupport'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

/*
 * Strategy numbers follow the core's GiST opclasses: 8 "contained by",
 * 15 distance, 18 equality.  <~> returns int4, hence integer_ops; the
 * distance function is exact at leaves, so nothing is rechecked.
 */
CREATE OPERATOR CLASS @extschema@.simhash64_gist_ops
    DEFAULT FOR TYPE @extschema@.simhash64 USING gist AS
    OPERATOR 8 @extschema@.<@ (@extschema@.simhash64, @extschema@.hamming_ball),
    OPERATOR 15 @extschema@.<~> (@extschema@.simhash64, @extschema@.simhash64)
        FOR ORDER BY pg_catalog.integer_ops,
    OPERATOR 18 @extschema@.= (@extschema@.simhash64, @extschema@.simhash64),
    FUNCTION 1 @extschema@.gist_simhash64_consistent(pg_catalog.internal, @extschema@.simhash64,
                                                     pg_catalog.int2, pg_catalog.oid, pg_catalog.internal),
    FUNCTION 2 @extschema@.gist_simhash64_union(pg_catalog.internal, pg_catalog.internal),
    FUNCTION 3 @extschema@.gist_simhash64_compress(pg_catalog.internal),
    FUNCTION 5 @extschema@.gist_simhash64_penalty(pg_catalog.internal, pg_catalog.internal,
                                                  pg_catalog.internal),
    FUNCTION 6 @extschema@.gist_simhash64_picksplit(pg_catalog.internal, pg_catalog.internal),
    FUNCTION 7 @extschema@.gist_simhash64_same(@extschema@.simhash64_gist_key,
                                               @extschema@.simhash64_gist_key, pg_catalog.internal),
    FUNCTION 8 @extschema@.gist_simhash64_distance(pg_catalog.internal, @extschema@.simhash64,
                                                   pg_catalog.int2, pg_catalog.oid, pg_catalog.internal),
    FUNCTION 9 @extschema@.gist_simhash64_fetch(pg_catalog.internal),
    FUNCTION 11 @extschema@.gist_simhash64_sortsupport(pg_catalog.internal),
    STORAGE @extschema@.simhash64_gist_key;

-- ===== end section: index gist =====

-- ===== section: index gin (src/index/gin_permuted.c) =====

/*
 * GIN: Hamming radius search, sh <@ hamming_ball(q, r), with permuted tables
 * (doc/index-gin.md).  Each row is stored once per block of its fingerprint,
 * as a simhash64-sized key: the block number, then the fingerprint rotated
 * so that the block leads.  The query arguments of extractQuery and
 * (tri)consistent are declared as simhash64, as amvalidate() expects; at run
 * time they receive the operator's right operand: a hamming_ball for <@, a
 * simhash64 for =.
 */
CREATE FUNCTION @extschema@.simhash64_gin_extract_value(@extschema@.simhash64, pg_catalog.internal, pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'simhash64_gin_extract_value'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash64_gin_extract_query(@extschema@.simhash64, pg_catalog.internal, pg_catalog.int2,
                                                        pg_catalog.internal, pg_catalog.internal,
                                                        pg_catalog.internal, pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'simhash64_gin_extract_query'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash64_gin_consistent(pg_catalog.internal, pg_catalog.int2, @extschema@.simhash64,
                                                     pg_catalog.int4, pg_catalog.internal, pg_catalog.internal,
                                                     pg_catalog.internal, pg_catalog.internal)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash64_gin_consistent'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash64_gin_compare_partial(@extschema@.simhash64, @extschema@.simhash64,
                                                          pg_catalog.int2, pg_catalog.internal)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'simhash64_gin_compare_partial'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash64_gin_triconsistent(pg_catalog.internal, pg_catalog.int2, @extschema@.simhash64,
                                                        pg_catalog.int4, pg_catalog.internal, pg_catalog.internal,
                                                        pg_catalog.internal)
RETURNS pg_catalog.char
AS 'MODULE_PATHNAME', 'simhash64_gin_triconsistent'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash64_gin_options(pg_catalog.internal)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'simhash64_gin_options'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- Keys are ordered by simhash64_cmp (unsigned), which keeps each table, and
-- each block value within it, one contiguous range of keys.
CREATE OPERATOR CLASS @extschema@.simhash64_gin_ops
    DEFAULT FOR TYPE @extschema@.simhash64 USING gin AS
    OPERATOR 1 @extschema@.<@ (@extschema@.simhash64, @extschema@.hamming_ball),
    OPERATOR 2 @extschema@.= (@extschema@.simhash64, @extschema@.simhash64),
    FUNCTION 1 @extschema@.simhash64_cmp(@extschema@.simhash64, @extschema@.simhash64),
    FUNCTION 2 @extschema@.simhash64_gin_extract_value(@extschema@.simhash64, pg_catalog.internal, pg_catalog.internal),
    FUNCTION 3 @extschema@.simhash64_gin_extract_query(@extschema@.simhash64, pg_catalog.internal, pg_catalog.int2,
                                                       pg_catalog.internal, pg_catalog.internal,
                                                       pg_catalog.internal, pg_catalog.internal),
    FUNCTION 4 @extschema@.simhash64_gin_consistent(pg_catalog.internal, pg_catalog.int2, @extschema@.simhash64,
                                                    pg_catalog.int4, pg_catalog.internal, pg_catalog.internal,
                                                    pg_catalog.internal, pg_catalog.internal),
    FUNCTION 5 @extschema@.simhash64_gin_compare_partial(@extschema@.simhash64, @extschema@.simhash64,
                                                         pg_catalog.int2, pg_catalog.internal),
    FUNCTION 6 @extschema@.simhash64_gin_triconsistent(pg_catalog.internal, pg_catalog.int2, @extschema@.simhash64,
                                                       pg_catalog.int4, pg_catalog.internal, pg_catalog.internal,
                                                       pg_catalog.internal),
    FUNCTION 7 @extschema@.simhash64_gin_options(pg_catalog.internal);

-- ===== end section: index gin =====

-- ===== section: planner support (src/planner/) =====

/*
 * Radius search through indexes, for the spellings users write:
 * `sh <~> q <= r`, `< r`, `r >= sh <~> q`, hamming_distance(sh, q) <= r.
 * The planner hook in the library turns them into within(sh, q, r), whose
 * support function makes `sh <@ hamming_ball(q, r)` index conditions and
 * estimates selectivity.  See doc/planner.md.
 */
CREATE FUNCTION @extschema@.within_support(pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'within_support'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

ALTER FUNCTION @extschema@.within(@extschema@.simhash64, @extschema@.simhash64, pg_catalog.int4)
    SUPPORT @extschema@.within_support;

/*
 * Answers no request: calling it loads the library, and with it the
 * planner hook, before the first query that uses <~> is planned.
 */
CREATE FUNCTION @extschema@.hamming_support(pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'hamming_support'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

ALTER FUNCTION @extschema@.simhash64_hamming(@extschema@.simhash64, @extschema@.simhash64)
    SUPPORT @extschema@.hamming_support;
ALTER FUNCTION @extschema@.hamming_distance(@extschema@.simhash64, @extschema@.simhash64)
    SUPPORT @extschema@.hamming_support;

-- Estimators of the index operators: the same model as within().
CREATE FUNCTION @extschema@.hamming_ball_restrict_sel(pg_catalog.internal, pg_catalog.oid,
                                                      pg_catalog.internal, pg_catalog.int4)
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'hamming_ball_restrict_sel'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.hamming_ball_join_sel(pg_catalog.internal, pg_catalog.oid,
                                                  pg_catalog.internal, pg_catalog.int2,
                                                  pg_catalog.internal)
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'hamming_ball_join_sel'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

ALTER OPERATOR @extschema@.<@ (@extschema@.simhash64, @extschema@.hamming_ball)
    SET (RESTRICT = @extschema@.hamming_ball_restrict_sel,
         JOIN = @extschema@.hamming_ball_join_sel);
ALTER OPERATOR @extschema@.@> (@extschema@.hamming_ball, @extschema@.simhash64)
    SET (RESTRICT = @extschema@.hamming_ball_restrict_sel,
         JOIN = @extschema@.hamming_ball_join_sel);

-- ===== end section: planner support =====

-- ===== section: minhash (src/minhash*.c) =====

-- Signatures: int4[] of num_perm values (doc/minhash.md says why int4).
CREATE FUNCTION @extschema@.minhash(doc pg_catalog.text, num_perm pg_catalog.int4 DEFAULT 128,
                                    shingle pg_catalog.int4 DEFAULT 3,
                                    unit pg_catalog.text DEFAULT 'word',
                                    seed pg_catalog.int8 DEFAULT 0)
RETURNS pg_catalog.int4[]
AS 'MODULE_PATHNAME', 'nd_minhash_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

CREATE FUNCTION @extschema@.minhash(features pg_catalog.text[], num_perm pg_catalog.int4 DEFAULT 128,
                                    seed pg_catalog.int8 DEFAULT 0)
RETURNS pg_catalog.int4[]
AS 'MODULE_PATHNAME', 'nd_minhash_text_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.minhash(features pg_catalog.int8[], num_perm pg_catalog.int4 DEFAULT 128,
                                    seed pg_catalog.int8 DEFAULT 0)
RETURNS pg_catalog.int4[]
AS 'MODULE_PATHNAME', 'nd_minhash_int8_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Estimates and exact values.
CREATE FUNCTION @extschema@.minhash_jaccard(a pg_catalog.int4[], b pg_catalog.int4[])
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'nd_minhash_jaccard'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.jaccard(a pg_catalog.text, b pg_catalog.text,
                                    shingle pg_catalog.int4 DEFAULT 3,
                                    unit pg_catalog.text DEFAULT 'word',
                                    seed pg_catalog.int8 DEFAULT 0)
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'nd_jaccard_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 200;

CREATE FUNCTION @extschema@.jaccard(a pg_catalog.int8[], b pg_catalog.int8[])
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'nd_jaccard_int8_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.jaccard(a pg_catalog.text[], b pg_catalog.text[])
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'nd_jaccard_text_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- LSH banding: index minhash_bands(sig, b, r) with GIN's built-in
-- array_ops and query with &&.
CREATE FUNCTION @extschema@.minhash_bands(sig pg_catalog.int4[], bands pg_catalog.int4,
                                          rows pg_catalog.int4)
RETURNS pg_catalog.int8[]
AS 'MODULE_PATHNAME', 'nd_minhash_bands'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.minhash_lsh_params(threshold pg_catalog.float8,
                                               num_perm pg_catalog.int4 DEFAULT 128,
                                               fp_weight pg_catalog.float8 DEFAULT 0.5,
                                               fn_weight pg_catalog.float8 DEFAULT 0.5,
                                               OUT bands pg_catalog.int4,
                                               OUT rows pg_catalog.int4)
AS 'MODULE_PATHNAME', 'nd_minhash_lsh_params'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10000;

-- "sig is at least threshold similar to query": candidates by band, then the
-- estimate.  A SQL function, so that the planner inlines it and matches
-- minhash_bands(sig, bands, rows) with an index on that expression; hence
-- not STRICT (an AND is not strict, which would stop the inlining).
CREATE FUNCTION @extschema@.minhash_similar(sig pg_catalog.int4[], query pg_catalog.int4[],
                                            threshold pg_catalog.float8,
                                            bands pg_catalog.int4, rows pg_catalog.int4)
RETURNS pg_catalog.bool
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT @extschema@.minhash_bands(sig, bands, rows)
           OPERATOR(pg_catalog.&&) @extschema@.minhash_bands(query, bands, rows)
       AND @extschema@.minhash_jaccard(sig, query) OPERATOR(pg_catalog.>=) threshold
$$;

-- The same one-liner verified with the exact Jaccard of the two texts
-- instead of the estimate: candidates from the band index, no false
-- positives (misses are still LSH's, pairs that share no band).  The shingle
-- parameters must be those the signatures were made with.
CREATE FUNCTION @extschema@.minhash_similar_exact(sig pg_catalog.int4[], query pg_catalog.int4[],
                                                  doc pg_catalog.text, query_doc pg_catalog.text,
                                                  threshold pg_catalog.float8,
                                                  bands pg_catalog.int4, rows pg_catalog.int4,
                                                  shingle pg_catalog.int4 DEFAULT 3,
                                                  unit pg_catalog.text DEFAULT 'word',
                                                  seed pg_catalog.int8 DEFAULT 0)
RETURNS pg_catalog.bool
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT @extschema@.minhash_bands(sig, bands, rows)
           OPERATOR(pg_catalog.&&) @extschema@.minhash_bands(query, bands, rows)
       AND @extschema@.jaccard(doc, query_doc, shingle, unit, seed) OPERATOR(pg_catalog.>=) threshold
$$;

-- b-bit signatures (Li & König): the low bits of each value, packed into a
-- bytea that records bits and num_perm; the estimate corrects for chance
-- agreements.
CREATE FUNCTION @extschema@.minhash_bbit(sig pg_catalog.int4[], bits pg_catalog.int4)
RETURNS pg_catalog.bytea
AS 'MODULE_PATHNAME', 'nd_minhash_bbit'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.minhash_bbit_jaccard(a pg_catalog.bytea, b pg_catalog.bytea)
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'nd_minhash_bbit_jaccard'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- ===== end section: minhash =====

-- ===== section: dedup pairs (src/dedup/pairs.c, src/dedup/band_keys.c) =====
-- Exact all-pairs search over a table's fingerprints, and the band keys
-- that let PostgreSQL's own joins find the same pairs.

/*
 * simhash_pairs (doc/dedup.md): every unordered pair of rows whose
 * fingerprints are within max_distance, once, id_a < id_b.  STABLE: they
 * read tables, through SPI in read-only mode, in the caller's snapshot.
 * PARALLEL RESTRICTED: the query may use the leader's temporary tables, and
 * results are materialised in a tuplestore of the calling backend.  Not
 * STRICT: a NULL blocks means "choose".  Run as the caller (not SECURITY
 * DEFINER), so the caller's privileges and row security apply.
 */
CREATE FUNCTION @extschema@.simhash_pairs(source pg_catalog.regclass, id_column pg_catalog.name,
                                          fingerprint_column pg_catalog.name,
                                          max_distance pg_catalog.int4 DEFAULT 3,
                                          blocks pg_catalog.int4 DEFAULT NULL)
RETURNS TABLE(id_a pg_catalog.int8, id_b pg_catalog.int8, distance pg_catalog.int4)
AS 'MODULE_PATHNAME', 'simhash_pairs_rel'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;

CREATE FUNCTION @extschema@.simhash_pairs(query pg_catalog.text,
                                          max_distance pg_catalog.int4 DEFAULT 3,
                                          blocks pg_catalog.int4 DEFAULT NULL)
RETURNS TABLE(id_a pg_catalog.int8, id_b pg_catalog.int8, distance pg_catalog.int4)
AS 'MODULE_PATHNAME', 'simhash_pairs_query'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;

/*
 * The table form again, for string literals: with three quoted arguments,
 * simhash_pairs('docs', 'id', 'sh') would otherwise be ambiguous between
 * the two forms above (each wins one argument position).  The name is
 * looked up as a regclass input would be.
 */
CREATE FUNCTION @extschema@.simhash_pairs(source pg_catalog.text, id_column pg_catalog.text,
                                          fingerprint_column pg_catalog.text,
                                          max_distance pg_catalog.int4 DEFAULT 3,
                                          blocks pg_catalog.int4 DEFAULT NULL)
RETURNS TABLE(id_a pg_catalog.int8, id_b pg_catalog.int8, distance pg_catalog.int4)
AS 'MODULE_PATHNAME', 'simhash_pairs_relname'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;

/*
 * Band keys: one bigint per permuted table; fingerprints within
 * max_distance share at least one, and simhash_band_first() names the first
 * one they share, so that a self-join on the keys reports each pair once
 * without DISTINCT (doc/dedup.md).  Without blocks, the smallest block
 * count whose keys have at least 24 bits.  The keys are stable: they may be
 * stored and indexed.
 */
CREATE FUNCTION @extschema@.simhash_band_keys(fingerprint @extschema@.simhash64,
                                              max_distance pg_catalog.int4 DEFAULT 3)
RETURNS pg_catalog.int8[]
AS 'MODULE_PATHNAME', 'simhash_band_keys'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash_band_keys(fingerprint @extschema@.simhash64,
                                              max_distance pg_catalog.int4, blocks pg_catalog.int4)
RETURNS pg_catalog.int8[]
AS 'MODULE_PATHNAME', 'simhash_band_keys_blocks'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash_band_first(a @extschema@.simhash64, b @extschema@.simhash64,
                                               key_index pg_catalog.int4,
                                               max_distance pg_catalog.int4 DEFAULT 3)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash_band_first'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash_band_first(a @extschema@.simhash64, b @extschema@.simhash64,
                                               key_index pg_catalog.int4,
                                               max_distance pg_catalog.int4, blocks pg_catalog.int4)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash_band_first_blocks'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
-- ===== end section: dedup pairs =====

-- ===== section: dedup clusters (src/dedup/clusters.c) =====
-- Connected components over near-duplicate pairs, and keep-one helpers for
-- the nightly dedup job.  The query and expression arguments are SQL run as
-- the caller (SECURITY INVOKER, like any SQL they run themselves), with
-- their search_path: hence no SET search_path here, and the helpers'
-- own operators are schema-qualified.

-- (id, cluster_id) for every id of a pair the query returns (two integer
-- columns); cluster_id is the smallest id of the connected component.
CREATE FUNCTION @extschema@.dedup_clusters(pairs_query pg_catalog.text,
                                           OUT id pg_catalog.int8,
                                           OUT cluster_id pg_catalog.int8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'nd_dedup_clusters'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

-- The helpers' argument check: column_name is a column of source whose type
-- is one of allowed (a domain over one counts), else 42703 / 42804.  base is
-- the type under any chain of domains, as getBaseType() finds it for
-- simhash_pairs() and dedup_clusters().
CREATE FUNCTION @extschema@.dedup_check_column(source pg_catalog.regclass,
                                               column_name pg_catalog.name,
                                               what pg_catalog.text,
                                               allowed pg_catalog.regtype[])
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
    typ pg_catalog.regtype;
    base pg_catalog.oid;
BEGIN
    SELECT a.atttypid, (WITH RECURSIVE d(o) AS (SELECT a.atttypid UNION ALL SELECT t.typbasetype
        FROM pg_catalog.pg_type t JOIN d ON t.oid OPERATOR(pg_catalog.=) d.o WHERE t.typtype OPERATOR(pg_catalog.=) 'd')
        SELECT d.o FROM d JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) d.o WHERE t.typtype OPERATOR(pg_catalog.<>) 'd') INTO typ, base
    FROM pg_catalog.pg_attribute a
    WHERE a.attrelid OPERATOR(pg_catalog.=) source
      AND a.attname OPERATOR(pg_catalog.=) column_name
      AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', column_name, source
            USING ERRCODE = 'undefined_column';
    END IF;
    IF base OPERATOR(pg_catalog.<>) ALL (allowed::pg_catalog.oid[]) THEN
        RAISE EXCEPTION '% column "%" of relation % must be of type %', what, column_name, source,
                pg_catalog.array_to_string(allowed::pg_catalog.text[], ' or ')
            USING ERRCODE = 'datatype_mismatch', DETAIL = pg_catalog.format('It is of type %s.', typ);
    END IF;
END
$$;

-- The rows of source that are in a cluster, with the row each cluster
-- keeps: the first by keep_order (an ORDER BY list over source's columns),
-- ties and a NULL or empty keep_order broken by the smallest id.
CREATE FUNCTION @extschema@.dedup_representatives(source pg_catalog.regclass,
                                                  id_column pg_catalog.name,
                                                  pairs_query pg_catalog.text,
                                                  keep_order pg_catalog.text DEFAULT NULL,
                                                  OUT id pg_catalog.int8,
                                                  OUT cluster_id pg_catalog.int8,
                                                  OUT representative pg_catalog.int8)
RETURNS SETOF record
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
AS $$
BEGIN
    IF source IS NULL OR id_column IS NULL OR pairs_query IS NULL THEN
        RAISE EXCEPTION 'source, id_column and pairs_query must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM @extschema@.dedup_check_column(source, id_column, 'id',
        ARRAY['pg_catalog.int2', 'pg_catalog.int4', 'pg_catalog.int8']::pg_catalog.regtype[]);
    -- keep_order must see source's columns only: the clusters' columns
    -- get names no table has, so that 'id DESC' means source's id.
    RETURN QUERY EXECUTE pg_catalog.format(
        'SELECT c."neardup: id", c."neardup: cluster_id", '
        '       pg_catalog.first_value(c."neardup: id") '
        '           OVER (PARTITION BY c."neardup: cluster_id" ORDER BY %3$s s.%1$I) '
        'FROM %2$s s '
        'JOIN (SELECT x.id AS "neardup: id", x.cluster_id AS "neardup: cluster_id" '
        '      FROM @extschema@.dedup_clusters($1) x) c '
        '  ON s.%1$I OPERATOR(pg_catalog.=) c."neardup: id"',
        id_column, source,
        NULLIF(pg_catalog.btrim(keep_order), '') OPERATOR(pg_catalog.||) ', ')
    USING pairs_query;
END
$$;

-- Deletes every row of a cluster but its representative, or, given
-- flag_column (boolean), sets it to true on those rows and to false on the
-- representatives.  Returns the number of rows deleted or changed.  Rows in
-- no cluster are not touched.
CREATE FUNCTION @extschema@.dedup_keep_one(source pg_catalog.regclass,
                                           id_column pg_catalog.name,
                                           pairs_query pg_catalog.text,
                                           keep_order pg_catalog.text DEFAULT NULL,
                                           flag_column pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    dup pg_catalog.int8[];
    keep pg_catalog.int8[];
    n pg_catalog.int8;
    m pg_catalog.int8;
    ship pg_catalog.text;
    flag pg_catalog.bool;
BEGIN
    IF flag_column IS NOT NULL THEN
        PERFORM @extschema@.dedup_check_column(source, flag_column, 'flag',
            ARRAY['pg_catalog.bool']::pg_catalog.regtype[]);
    END IF;
    -- the whole decision first, then one statement per change: the pairs
    -- query never sees a half-deduplicated table
    SELECT pg_catalog.array_agg(r.id) FILTER (WHERE r.id OPERATOR(pg_catalog.<>) r.representative),
           pg_catalog.array_agg(r.id) FILTER (WHERE r.id OPERATOR(pg_catalog.=) r.representative)
      INTO dup, keep
      FROM @extschema@.dedup_representatives(source, id_column, pairs_query, keep_order) r;
    -- How the ids reach the rows.  On a foreign table, or a partitioned
    -- table with a foreign partition, the statement must ship whole:
    -- postgres_fdw cannot ship a join with unnest($1), and would instead
    -- read every row of each shard FOR UPDATE and change them one round
    -- trip each; "id = ANY ($1)" ships as one statement per shard.  The
    -- array is cast to the column's type (the ids come from the join with
    -- source in dedup_representatives, so they fit), because = ANY with a
    -- cross-type operator (int4 = int8) is not hashed: on a local partition
    -- without an index that is a linear search per row.  Local tables keep
    -- the join, which hashes whatever the types (doc/dedup.md).
    SELECT CASE WHEN c.relkind OPERATOR(pg_catalog.=) 'f'
                  OR (c.relkind OPERATOR(pg_catalog.=) 'p' AND EXISTS (
                      SELECT FROM pg_catalog.pg_partition_tree(source) p
                      JOIN pg_catalog.pg_class pc ON pc.oid OPERATOR(pg_catalog.=) p.relid
                      WHERE pc.relkind OPERATOR(pg_catalog.=) 'f'))
                THEN pg_catalog.format('s.%I OPERATOR(pg_catalog.=) ANY ($1::%s[])',
                                       id_column, pg_catalog.format_type(
                                           CASE t.typtype WHEN 'd' THEN t.typbasetype ELSE t.oid END, NULL))
           END
      INTO ship
      FROM pg_catalog.pg_class c, pg_catalog.pg_attribute a
      JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
     WHERE c.oid OPERATOR(pg_catalog.=) source
       AND a.attrelid OPERATOR(pg_catalog.=) source
       AND a.attname OPERATOR(pg_catalog.=) id_column;
    IF flag_column IS NULL THEN
        IF ship IS NOT NULL THEN
            EXECUTE pg_catalog.format('DELETE FROM %s s WHERE %s', source, ship)
            USING dup;
        ELSE
            EXECUTE pg_catalog.format(
                'DELETE FROM %s s USING pg_catalog.unnest($1) d(id) '
                'WHERE s.%I OPERATOR(pg_catalog.=) d.id', source, id_column)
            USING dup;
        END IF;
        GET DIAGNOSTICS n = ROW_COUNT;
        RETURN n;
    END IF;
    n := 0;
    FOR flag IN SELECT * FROM (VALUES (true), (false)) v LOOP
        IF ship IS NOT NULL THEN
            EXECUTE pg_catalog.format(
                'UPDATE %1$s s SET %3$I = %4$L WHERE %2$s AND s.%3$I IS DISTINCT FROM %4$L',
                source, ship, flag_column, flag)
            USING CASE WHEN flag THEN dup ELSE keep END;
        ELSE
            EXECUTE pg_catalog.format(
                'UPDATE %1$s s SET %3$I = %4$L FROM pg_catalog.unnest($1) d(id) '
                'WHERE s.%2$I OPERATOR(pg_catalog.=) d.id AND s.%3$I IS DISTINCT FROM %4$L',
                source, id_column, flag_column, flag)
            USING CASE WHEN flag THEN dup ELSE keep END;
        END IF;
        GET DIAGNOSTICS m = ROW_COUNT;
        n := n OPERATOR(pg_catalog.+) m;
    END LOOP;
    RETURN n;
END
$$;

-- Incremental runs: the pairs within max_distance that involve a row whose
-- id is above since (NULL: every pair), each once with id_a < id_b.  One
-- index probe per new row, against every row, when there are few new rows
-- and a GIN or GiST index: the cost follows the new rows, not the table;
-- otherwise simhash_pairs() over the table, filtered.
CREATE FUNCTION @extschema@.simhash_pairs_since(source pg_catalog.regclass,
                                                id_column pg_catalog.name,
                                                fingerprint_column pg_catalog.name,
                                                since pg_catalog.int8,
                                                max_distance pg_catalog.int4 DEFAULT 3,
                                                OUT id_a pg_catalog.int8,
                                                OUT id_b pg_catalog.int8,
                                                OUT distance pg_catalog.int4)
RETURNS SETOF record
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
AS $$
DECLARE
    new_rows pg_catalog.float8;
    total pg_catalog.float8;
    probe pg_catalog.bool := true;
    how pg_catalog.text := 'index probes: the radius is beyond simhash_pairs()';
BEGIN
    IF source IS NULL OR id_column IS NULL OR fingerprint_column IS NULL OR max_distance IS NULL THEN
        RAISE EXCEPTION 'source, id_column, fingerprint_column and max_distance must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- The same errors whichever search runs below.
    PERFORM @extschema@.dedup_check_column(source, id_column, 'id',
        ARRAY['pg_catalog.int2', 'pg_catalog.int4', 'pg_catalog.int8']::pg_catalog.regtype[]);
    PERFORM @extschema@.dedup_check_column(source, fingerprint_column, 'fingerprint',
        ARRAY['@extschema@.simhash64']::pg_catalog.regtype[]);
    -- Probing the index costs about 50 times more per new row than the
    -- sort-based all-pairs search costs per row of the table (measured,
    -- doc/dedup.md): past 2% of new rows, or without a GIN or GiST index
    -- on the fingerprint, simhash_pairs() and a filter are cheaper.  Its
    -- radius is 0 .. 15; the probes take any.
    IF max_distance OPERATOR(pg_catalog.>=) 0 AND max_distance OPERATOR(pg_catalog.<=) 15 THEN
        IF since IS NULL OR NOT EXISTS (
            SELECT FROM pg_catalog.pg_index i
            JOIN pg_catalog.pg_class ic ON ic.oid OPERATOR(pg_catalog.=) i.indexrelid
            JOIN pg_catalog.pg_am am ON am.oid OPERATOR(pg_catalog.=) ic.relam
            JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) i.indrelid
                                          AND a.attnum OPERATOR(pg_catalog.=) i.indkey[0]
            WHERE i.indrelid OPERATOR(pg_catalog.=) source
              AND a.attname OPERATOR(pg_catalog.=) fingerprint_column
              AND am.amname OPERATOR(pg_catalog.=) ANY (ARRAY['gin', 'gist']::pg_catalog.name[])) THEN
            probe := false;
            how := CASE WHEN since IS NULL THEN 'simhash_pairs(): all pairs'
                        ELSE 'simhash_pairs(): no GIN or GiST index on the fingerprint' END;
        ELSE
            EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %s WHERE %I OPERATOR(pg_catalog.>) %L::pg_catalog.int8',
                                      source, id_column, since) INTO new_rows;
            SELECT c.reltuples INTO total FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) source;
            IF total OPERATOR(pg_catalog.<=) 0 THEN
                EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %s', source) INTO total;
            END IF;
            probe := new_rows OPERATOR(pg_catalog.*) 50 OPERATOR(pg_catalog.<=) total;
            how := pg_catalog.format('%s: %s new rows of %s',
                                     CASE WHEN probe THEN 'index probes' ELSE 'simhash_pairs()' END,
                                     new_rows, total);
        END IF;
    END IF;
    RAISE DEBUG 'simhash_pairs_since: %', how;
    IF NOT probe THEN
        RETURN QUERY SELECT p.id_a, p.id_b, p.distance
                     FROM @extschema@.simhash_pairs(source, id_column, fingerprint_column,
                                                    max_distance) p
                     WHERE since IS NULL OR p.id_b OPERATOR(pg_catalog.>) since;
        RETURN;
    END IF;
    -- since and the radius go in as literals, so that the planner sees the
    -- radius condition and the new rows' share as constants.  A pair of two
    -- new rows is found from both ends: kept from the smaller id's end.
    RETURN QUERY EXECUTE pg_catalog.format(
        'SELECT LEAST(n.%1$I, o.%1$I)::pg_catalog.int8, GREATEST(n.%1$I, o.%1$I)::pg_catalog.int8, '
        '       n.%2$I OPERATOR(@extschema@.<~>) o.%2$I '
        'FROM %3$s n JOIN %3$s o '
        '  ON o.%2$I OPERATOR(@extschema@.<~>) n.%2$I OPERATOR(pg_catalog.<=) %5$s '
        ' AND o.%1$I OPERATOR(pg_catalog.<>) n.%1$I '
        'WHERE n.%1$I OPERATOR(pg_catalog.>) %4$L::pg_catalog.int8 '
        '  AND (o.%1$I OPERATOR(pg_catalog.<=) %4$L::pg_catalog.int8 '
        '       OR o.%1$I OPERATOR(pg_catalog.>) n.%1$I)',
        id_column, fingerprint_column, source,
        COALESCE(since::pg_catalog.text, '-9223372036854775808'), max_distance);
END
$$;

-- ===== end section: dedup clusters =====
