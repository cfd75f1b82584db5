--
-- nd_extension_catalog(ext): one line of text per member object of an
-- extension, with everything about it that an install or update script
-- decides (definitions, flags, support functions, operator class members,
-- privileges, comments), in names rather than OIDs, so that two databases
-- can be compared with diff.  Used by test/e2e/upgrade.sh to check that
-- CREATE EXTENSION VERSION '0.1' + ALTER EXTENSION UPDATE gives the catalog
-- a fresh CREATE EXTENSION gives.
--
CREATE FUNCTION nd_extension_catalog(ext name) RETURNS SETOF text
LANGUAGE sql STABLE
AS $$
WITH member AS (
    SELECT d.classid, d.objid, d.objsubid
    FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
    WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
      AND e.extname = ext
),
detail AS (
    SELECT m.*, pg_describe_object(m.classid, m.objid, m.objsubid) AS what,
        CASE m.classid
        WHEN 'pg_proc'::regclass THEN (
            SELECT CASE WHEN p.prokind = 'a' THEN
                       format('aggregate trans=%s final=%s combine=%s serial=%s deserial=%s stype=%s parallel=%s',
                              a.aggtransfn::regprocedure, a.aggfinalfn::regprocedure,
                              a.aggcombinefn::regprocedure, a.aggserialfn::regprocedure,
                              a.aggdeserialfn::regprocedure, a.aggtranstype::regtype, p.proparallel)
                   ELSE pg_get_functiondef(p.oid) END
                   || format(' acl=%s', p.proacl)
            FROM pg_proc p LEFT JOIN pg_aggregate a ON a.aggfnoid = p.oid
            WHERE p.oid = m.objid)
        WHEN 'pg_type'::regclass THEN (
            SELECT format('len=%s byval=%s type=%s category=%s preferred=%s in=%s out=%s recv=%s send=%s '
                          'typmodin=%s analyze=%s align=%s storage=%s notnull=%s base=%s elem=%s array=%s acl=%s',
                          t.typlen, t.typbyval, t.typtype, t.typcategory, t.typispreferred,
                          t.typinput::regprocedure, t.typoutput::regprocedure,
                          t.typreceive::regprocedure, t.typsend::regprocedure,
                          t.typmodin::regprocedure, t.typanalyze::regprocedure, t.typalign,
                          t.typstorage, t.typnotnull, t.typbasetype::regtype, t.typelem::regtype,
                          t.typarray::regtype, t.typacl)
            FROM pg_type t WHERE t.oid = m.objid)
        WHEN 'pg_operator'::regclass THEN (
            SELECT format('result=%s code=%s commutator=%s negator=%s restrict=%s join=%s merges=%s hashes=%s',
                          o.oprresult::regtype, o.oprcode::regprocedure,
                          o.oprcom::regoperator, o.oprnegate::regoperator,
                          o.oprrest::regprocedure, o.oprjoin::regprocedure,
                          o.oprcanmerge, o.oprcanhash)
            FROM pg_operator o WHERE o.oid = m.objid)
        WHEN 'pg_opclass'::regclass THEN (
            SELECT format('default=%s keytype=%s family=%s',
                          c.opcdefault, c.opckeytype::regtype,
                          pg_describe_object('pg_opfamily'::regclass, c.opcfamily, 0))
            FROM pg_opclass c WHERE c.oid = m.objid)
        WHEN 'pg_opfamily'::regclass THEN (
            SELECT concat_ws(' ',
                (SELECT string_agg(format('op(%s %s %s %s)', ao.amopstrategy, ao.amopopr::regoperator,
                                          ao.amoppurpose,
                                          pg_describe_object('pg_opfamily'::regclass, ao.amopsortfamily, 0)),
                                   ' ' ORDER BY ao.amopstrategy, ao.amopopr::regoperator::text)
                 FROM pg_amop ao WHERE ao.amopfamily = m.objid),
                (SELECT string_agg(format('proc(%s %s %s %s)', ap.amprocnum,
                                          ap.amproclefttype::regtype, ap.amprocrighttype::regtype,
                                          ap.amproc::regprocedure),
                                   ' ' ORDER BY ap.amprocnum, ap.amproclefttype::regtype::text,
                                                ap.amprocrighttype::regtype::text)
                 FROM pg_amproc ap WHERE ap.amprocfamily = m.objid)))
        WHEN 'pg_cast'::regclass THEN (
            SELECT format('context=%s method=%s func=%s', c.castcontext, c.castmethod,
                          c.castfunc::regprocedure)
            FROM pg_cast c WHERE c.oid = m.objid)
        WHEN 'pg_namespace'::regclass THEN (
            SELECT format('owner=%s acl=%s', n.nspowner::regrole, n.nspacl)
            FROM pg_namespace n WHERE n.oid = m.objid)
        WHEN 'pg_am'::regclass THEN (
            SELECT format('type=%s handler=%s', a.amtype, a.amhandler::regprocedure)
            FROM pg_am a WHERE a.oid = m.objid)
        ELSE 'unknown member kind ' || m.classid::regclass::text
        END AS def,
        (SELECT description FROM pg_description ds
         WHERE ds.objoid = m.objid AND ds.classoid = m.classid AND ds.objsubid = m.objsubid) AS comment
    FROM member m
)
SELECT format('%s | %s | comment=%s', what, def, comment)
FROM detail
ORDER BY 1
$$;
