import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a as C,b as H}from"./chunk-5HWXVV4G.js";import{h as R,l as x,n as D}from"./chunk-VM5WO332.js";var de="57014";function ge(o){return o.startsWith("pg_")}function me(o){let i=o.replace(/\s+/g," ").trim(),r=/\bFROM\s+(?:pg_catalog\.)?(\w+)/i.exec(i),a=i.slice(0,60);return r?`${r[1]} (${a}…)`:a}var L=class extends Error{code="extraction_timeout";queryLabel;timeoutMs;diagnostic;constructor(i,r){super(`extraction query ${i} exceeded the ${r}ms statement_timeout budget`),this.name="ExtractionTimeoutError",this.queryLabel=i,this.timeoutMs=r,this.diagnostic={code:this.code,severity:"error",message:this.message,context:{queryLabel:i,timeoutMs:r}}}};function k(o){let i=new Set(o.map(t=>R(t.id))),r=[],a=[];for(let t of o){if("target"in t.id){let e=R(t.id.target);if(!i.has(e)){a.push({code:"orphaned_satellite",severity:"info",subject:t.id,message:`dropped ${t.id.kind} whose target ${e} was not extracted (filtered)`});continue}}r.push(t)}return{facts:r,diagnostics:a}}var w="('pg_catalog', 'information_schema')",m=`
  n.nspname NOT IN ${w}
  AND n.nspname NOT LIKE 'pg\\_toast%'
  AND n.nspname NOT LIKE 'pg\\_temp%'`;function E(o,i){return`NOT EXISTS (
    SELECT 1 FROM pg_depend ext_d
    WHERE ext_d.classid = '${o}'::regclass
      AND ext_d.objid = ${i}
      AND ext_d.deptype = 'e')`}var f=(o,i)=>`(
    SELECT ext.extname
    FROM pg_depend ext_d
    JOIN pg_extension ext ON ext.oid = ext_d.refobjid
    WHERE ext_d.classid = '${o}'::regclass
      AND ext_d.objid = ${i}
      AND ext_d.refclassid = 'pg_extension'::regclass
      AND ext_d.deptype = 'e'
      AND ext.extname <> 'plpgsql'
    LIMIT 1)`,h=(o,i,r)=>`
    (SELECT json_agg(json_build_object(
        'grantee', acl.grantee_name,
        'privileges', acl.privileges,
        'grantable', acl.grantable,
        -- The owner's create-time default privilege set for this object kind
        -- (carried ONLY on the owner's row). Lets the planner's default-ACL
        -- elision tell "owner kept the full default" (elidable) apart from
        -- "owner revoked one of their defaults" (must keep the REVOKE/GRANT),
        -- without hardcoding the version-dependent set (PG17 added MAINTAIN).
        'ownerDefault', CASE
          WHEN acl.grantee_name = (
            SELECT rolname FROM pg_roles WHERE oid = ${r})
          THEN (SELECT array_agg(d.privilege_type ORDER BY d.privilege_type)
                FROM aclexplode(acldefault('${i}', ${r})) d
                WHERE d.grantee = ${r})
          ELSE NULL END) ORDER BY acl.grantee_name)
     FROM (
       SELECT COALESCE(g.rolname, 'PUBLIC') AS grantee_name,
              -- DISTINCT: aclexplode() yields one row per GRANTOR, so a privilege
              -- granted to one grantee by two grantors appears twice. pg-delta
              -- models the EFFECTIVE privilege set, not who granted it, so grantor
              -- identity is intentionally ignored — de-duplicate to avoid rendering
              -- a doubled privilege list (GRANT SELECT, SELECT ...), which
              -- Postgres collapses on apply so a re-extract no longer matches and
              -- the proof drifts.
              array_agg(DISTINCT e.privilege_type ORDER BY e.privilege_type) AS privileges,
              array_agg(DISTINCT e.privilege_type ORDER BY e.privilege_type)
                FILTER (WHERE e.is_grantable) AS grantable
       FROM aclexplode(COALESCE(${o}, acldefault('${i}', ${r}))) e
       LEFT JOIN pg_roles g ON g.oid = e.grantee
       GROUP BY 1
       UNION ALL
       SELECT 'PUBLIC', ARRAY[]::text[], NULL::text[]
       WHERE ${o} IS NOT NULL
         AND EXISTS (
           SELECT 1 FROM aclexplode(acldefault('${i}', ${r})) d
           WHERE d.grantee = 0)
         AND NOT EXISTS (
           SELECT 1 FROM aclexplode(${o}) a WHERE a.grantee = 0)
       UNION ALL
       -- Revoked OWNER default (mirror of the PUBLIC case): PostgreSQL grants the
       -- owner its full default on CREATE, so a full owner revoke
       -- (REVOKE ALL ON ... FROM owner) leaves a non-NULL acl with NO owner row.
       -- Emit an empty owner entry so the diff plans a REVOKE ALL FROM owner that
       -- clears the create-time default; without it a freshly created object keeps
       -- PostgreSQL built-in owner privileges and never converges.
       SELECT (SELECT rolname FROM pg_roles WHERE oid = ${r}),
              ARRAY[]::text[], NULL::text[]
       WHERE ${o} IS NOT NULL
         AND EXISTS (
           SELECT 1 FROM aclexplode(acldefault('${i}', ${r})) d
           WHERE d.grantee = ${r})
         AND NOT EXISTS (
           SELECT 1 FROM aclexplode(${o}) a
           WHERE a.grantee = ${r})
     ) acl)`,Ee=(o,i,r,a,t)=>`
    (SELECT json_agg(json_build_object(
        'grantee', d.grantee, 'privileges', d.privileges,
        'grantable', d.grantable, '_initPrivs', d.init_privs
      ) ORDER BY d.grantee)
     FROM (
       WITH cur AS (
         SELECT COALESCE(g.rolname, 'PUBLIC') AS grantee,
                -- DISTINCT across grantors (aclexplode emits one row per grantor);
                -- grantor identity is intentionally ignored — see aclJson.
                array_agg(DISTINCT e.privilege_type ORDER BY e.privilege_type) AS privileges,
                COALESCE(array_agg(DISTINCT e.privilege_type ORDER BY e.privilege_type)
                  FILTER (WHERE e.is_grantable), ARRAY[]::text[]) AS grantable
         FROM aclexplode(COALESCE(${o}, acldefault('${i}', ${r}))) e
         LEFT JOIN pg_roles g ON g.oid = e.grantee
         GROUP BY 1
       ),
       ini AS (
         SELECT COALESCE(g.rolname, 'PUBLIC') AS grantee,
                -- DISTINCT across grantors (aclexplode emits one row per grantor);
                -- grantor identity is intentionally ignored — see aclJson.
                array_agg(DISTINCT e.privilege_type ORDER BY e.privilege_type) AS privileges,
                COALESCE(array_agg(DISTINCT e.privilege_type ORDER BY e.privilege_type)
                  FILTER (WHERE e.is_grantable), ARRAY[]::text[]) AS grantable
         FROM aclexplode(COALESCE(
                (SELECT ip.initprivs FROM pg_init_privs ip
                 WHERE ip.objoid = ${t}
                   AND ip.classoid = '${a}'::regclass
                   AND ip.objsubid = 0),
                acldefault('${i}', ${r}))) e
         LEFT JOIN pg_roles g ON g.oid = e.grantee
         GROUP BY 1
       )
       SELECT
         COALESCE(cur.grantee, ini.grantee) AS grantee,
         COALESCE(cur.privileges, ARRAY[]::text[]) AS privileges,
         COALESCE(cur.grantable, ARRAY[]::text[]) AS grantable,
         CASE WHEN ini.grantee IS NOT NULL
              THEN json_build_object(
                     'privileges', ini.privileges, 'grantable', ini.grantable)
              END AS init_privs
       FROM cur FULL OUTER JOIN ini USING (grantee)
       WHERE cur.privileges IS DISTINCT FROM ini.privileges
          OR cur.grantable IS DISTINCT FROM ini.grantable
     ) d)`,A=(o,i,r,a,t)=>`
    CASE WHEN EXISTS (
      SELECT 1 FROM pg_depend md
      WHERE md.classid = '${a}'::regclass AND md.objid = ${t}
        AND md.refclassid = 'pg_extension'::regclass AND md.deptype = 'e')
    THEN ${Ee(o,i,r,a,t)}
    ELSE ${h(o,i,r)}
    END`,u=o=>o==null?[]:o.map(r=>({grantee:r.grantee,privileges:r.privileges,grantable:r.grantable??[],...r.ownerDefault!=null?{ownerDefault:r.ownerDefault}:{},...r._initPrivs!=null?{initPrivs:{privileges:r._initPrivs.privileges,grantable:r._initPrivs.grantable??[]}}:{}})),O=o=>({kind:"schema",name:String(o)});async function M(o,i,r=!0){let a=[],t=[],e=[],c=[],g=async S=>{try{return(await o.query(S)).rows}catch(b){throw i!==void 0&&b.code===de?new L(me(S),i):b}},n=(await g("SELECT current_setting('server_version') AS version, current_setting('server_version_num')::int AS num"))[0],s=n?.version??"unknown",p=Number(n?.num??0),l=Math.floor(p/1e4);return{q:g,serverVersion:s,serverVersionNum:p,pgMajor:l,facts:a,edges:t,diagnostics:e,factDiagnostics:c,redactSecrets:r,pushWithMeta:(S,b,T)=>{a.push(S);let I=b.comment;if(typeof I=="string"){let y=S.id.kind==="constraint"&&S.parent?.kind==="domain";a.push({id:{kind:"comment",target:S.id},parent:S.id,payload:y?{text:I,onDomain:!0}:{text:I}})}for(let y of T??[])a.push({id:{kind:"acl",target:S.id,grantee:y.grantee},parent:S.id,payload:{privileges:y.privileges,grantable:y.grantable,...y.ownerDefault!==void 0?{_ownerDefault:y.ownerDefault}:{},...y.initPrivs!==void 0?{_initPrivs:{privileges:y.initPrivs.privileges,grantable:y.initPrivs.grantable}}:{}}})},pushMemberEdge:(S,b)=>{let T=b.ext_member_of;typeof T=="string"&&t.push({from:S,to:{kind:"extension",name:T},kind:"memberOfExtension"})},pushOwnerEdge:(S,b)=>{typeof b=="string"&&b.length>0&&!ge(b)&&t.push({from:S,to:{kind:"role",name:b},kind:"owner"})},pushSeclabel:(S,b,T)=>{a.push({id:{kind:"securityLabel",target:S,provider:b},parent:S,payload:{label:T}})}}}async function j(o){let{q:i,edges:r}=o;for(let a of await i(`
    SELECT cn.nspname AS child_schema, cc.relname AS child_name,
           pn.nspname AS parent_schema, pc.relname AS parent_name
    FROM pg_inherits i
    JOIN pg_class cc ON cc.oid = i.inhrelid
    JOIN pg_namespace cn ON cn.oid = cc.relnamespace
    JOIN pg_class pc ON pc.oid = i.inhparent
    JOIN pg_namespace pn ON pn.oid = pc.relnamespace
    WHERE cc.relkind IN ('r', 'p')
      AND cn.nspname NOT IN ${w}`))r.push({from:{kind:"table",schema:String(a.child_schema),name:String(a.child_name)},to:{kind:"table",schema:String(a.parent_schema),name:String(a.parent_name)},kind:"depends"})}async function W(o){let{q:i,edges:r,diagnostics:a}=o,t=await i(`
    WITH dep AS (
      SELECT d.classid, d.objid, d.objsubid,
             d.refclassid, d.refobjid, d.refobjsubid
      FROM pg_depend d
      WHERE d.deptype IN ('n', 'a')
        -- sequence OWNED BY is carried as payload + ALTER SEQUENCE … OWNED BY
        -- (pg_dump's model); the auto edge would cycle with the column default
        AND NOT (d.deptype = 'a'
                 AND d.classid = 'pg_class'::regclass
                 AND d.refclassid = 'pg_class'::regclass
                 AND d.refobjsubid > 0
                 AND EXISTS (SELECT 1 FROM pg_class sc
                             WHERE sc.oid = d.objid AND sc.relkind = 'S'))
    ),
    endpoints AS (
      SELECT classid, objid, objsubid FROM dep
      UNION
      SELECT refclassid, refobjid, refobjsubid FROM dep
    ),
    -- one derived table per resolver branch, each built once over its catalog
    rel AS (
      SELECT rc.oid, rc.relkind, json_build_object('kind',
               CASE rc.relkind
                 WHEN 'r' THEN 'table' WHEN 'p' THEN 'table'
                 WHEN 'f' THEN 'foreignTable'
                 WHEN 'v' THEN 'view' WHEN 'm' THEN 'materializedView'
                 WHEN 'i' THEN 'index' WHEN 'I' THEN 'index'
                 WHEN 'S' THEN 'sequence' END,
               'schema', rn.nspname, 'name', rc.relname) AS id
      FROM pg_class rc JOIN pg_namespace rn ON rn.oid = rc.relnamespace
      WHERE rc.relkind IN ('r','p','f','v','m','i','I','S')
    ),
    cbi AS (
      -- a constraint-backed index resolves to its constraint, not the index
      SELECT con.conindid AS oid,
             json_build_object('kind','constraint','schema',cn.nspname,
                               'table',cc.relname,'name',con.conname) AS id
      FROM pg_constraint con
      JOIN pg_class cc ON cc.oid = con.conrelid
      JOIN pg_namespace cn ON cn.oid = cc.relnamespace
      WHERE con.contype IN ('p','u','x') AND con.conindid <> 0
    ),
    col AS (
      SELECT att.attrelid AS oid, att.attnum AS subid,
             json_build_object('kind','column','schema',rn.nspname,
                               'table',rc.relname,'name',att.attname) AS id
      FROM pg_attribute att
      JOIN pg_class rc ON rc.oid = att.attrelid AND rc.relkind IN ('r','p','f')
      JOIN pg_namespace rn ON rn.oid = rc.relnamespace
      WHERE att.attnum > 0 AND NOT att.attisdropped
    ),
    proc AS (
      -- prokind 'w' (window functions) is extracted as a function fact
      -- (src/extract/routines.ts: only 'p' -> procedure, everything else ->
      -- function), so it MUST be resolvable here -- otherwise a pg_depend edge
      -- into a user window function resolves to NULL and is silently dropped,
      -- and a view/rule that uses it is never rebuilt against it (issue #333).
      -- The kind CASE already maps 'w' to 'function' via ELSE.
      SELECT pp.oid, json_build_object(
               'kind', CASE pp.prokind WHEN 'a' THEN 'aggregate' WHEN 'p' THEN 'procedure' ELSE 'function' END,
               'schema', pn.nspname, 'name', pp.proname,
               'args', ARRAY(SELECT format_type(t.t, NULL)
                             FROM unnest(pp.proargtypes) WITH ORDINALITY AS t(t, ord)
                             ORDER BY t.ord)::text[]) AS id
      FROM pg_proc pp JOIN pg_namespace pn ON pn.oid = pp.pronamespace
      WHERE pp.prokind IN ('f','p','a','w')
    ),
    tcon AS (
      SELECT con.oid, json_build_object('kind','constraint','schema',cn.nspname,
                               'table',cc.relname,'name',con.conname) AS id
      FROM pg_constraint con
      JOIN pg_class cc ON cc.oid = con.conrelid
      JOIN pg_namespace cn ON cn.oid = cc.relnamespace
      WHERE con.conrelid <> 0
    ),
    dcon AS (
      SELECT con.oid, json_build_object('kind','constraint','schema',dn.nspname,
                               'table',dt.typname,'name',con.conname) AS id
      FROM pg_constraint con
      JOIN pg_type dt ON dt.oid = con.contypid
      JOIN pg_namespace dn ON dn.oid = dt.typnamespace
      WHERE con.contypid <> 0
    ),
    typ AS (
      -- Resolve array types (typcategory 'A') to their ELEMENT type: a column or
      -- argument of an array type records its pg_depend edge against the implicit
      -- array type (e.g. _user_defined_filter), but the managed fact is the
      -- element type. Mapping the array oid to the element's stable id keeps the
      -- depends-on-element ordering correct for array-of-composite/domain/enum
      -- columns and arguments (regression: realtime.subscription has a
      -- user_defined_filter array column; without this the table/function was
      -- ordered before the type). An array of a base type (e.g. int4) resolves to
      -- a pg_catalog element that the typtype filter drops below -- harmless, as
      -- builtins are unmanaged.
      SELECT tt.oid,
        CASE
          WHEN base.typrelid <> 0::oid AND rc.oid IS NOT NULL THEN
            json_build_object(
              'kind', CASE rc.relkind
                        WHEN 'v' THEN 'view'
                        WHEN 'm' THEN 'materializedView'
                        WHEN 'f' THEN 'foreignTable'
                        ELSE 'table'
                      END,
              'schema', rn.nspname,
              'name', rc.relname)
          ELSE json_build_object(
            'kind', CASE base.typtype WHEN 'd' THEN 'domain' ELSE 'type' END,
            'schema', tn.nspname,
            'name', base.typname)
        END AS id
      FROM pg_type tt
      JOIN pg_type base
        ON base.oid = CASE
             WHEN tt.typtype = 'b' AND tt.typcategory = 'A' AND tt.typelem <> 0
             THEN tt.typelem ELSE tt.oid END
      JOIN pg_namespace tn ON tn.oid = base.typnamespace
      LEFT JOIN pg_class rc ON rc.oid = base.typrelid
                           AND rc.relkind IN ('r', 'p', 'f', 'v', 'm')
      LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace
      WHERE base.typtype IN ('d', 'e', 'c', 'r')
    ),
    -- a composite type's pg_class (relkind c) endpoint resolves to the composite
    -- TYPE fact. pg_depend records a composite attribute's type dependency as
    -- (classid=pg_class, objid=composite pg_class, objsubid=attnum) -> pg_type,
    -- but the col CTE excludes relkind c. Attributing the edge to the top-level
    -- type (not the folded typeAttribute child) keeps the create/teardown
    -- ordering of a composite-uses-domain/type chain correct and independent of
    -- child-drop folding.
    comptype AS (
      SELECT cc.oid, json_build_object('kind','type','schema',cn.nspname,
                               'name',cc.relname) AS id
      FROM pg_class cc JOIN pg_namespace cn ON cn.oid = cc.relnamespace
      WHERE cc.relkind = 'c'
    ),
    extm AS (
      -- a reference INTO an extension-member object resolves to the extension,
      -- not the member fact (4b Stage 3): the member is observed but projected
      -- out by default, so a member-targeted edge would be pruned with it and
      -- lose the dependent's ordering on the extension. One join keyed by
      -- (classid, objid) replaces the old per-branch nested pg_depend lookups;
      -- an object belongs to at most one extension, so (classid, objid) is
      -- unique here and the join never multiplies dep rows (the old form's
      -- LIMIT 1 was guarding the same single-membership invariant).
      SELECT ed.classid, ed.objid,
             json_build_object('kind','extension','name',ext.extname) AS id
      FROM pg_depend ed JOIN pg_extension ext ON ext.oid = ed.refobjid
      WHERE ed.refclassid = 'pg_extension'::regclass AND ed.deptype = 'e'
    ),
    coll AS (
      SELECT cl.oid, json_build_object('kind','collation','schema',cln.nspname,
                               'name',cl.collname) AS id
      FROM pg_collation cl JOIN pg_namespace cln ON cln.oid = cl.collnamespace
    ),
    pol AS (
      SELECT po.oid, json_build_object('kind','policy','schema',pn.nspname,
                               'table',pc.relname,'name',po.polname) AS id
      FROM pg_policy po
      JOIN pg_class pc ON pc.oid = po.polrelid
      JOIN pg_namespace pn ON pn.oid = pc.relnamespace
    ),
    evt AS (
      SELECT et.oid, json_build_object('kind','eventTrigger','name',et.evtname) AS id
      FROM pg_event_trigger et
    ),
    pub AS (
      SELECT pb.oid, json_build_object('kind','publication','name',pb.pubname) AS id
      FROM pg_publication pb
    ),
    pubrel AS (
      SELECT pr.oid, json_build_object('kind','publication','name',pb.pubname) AS id
      FROM pg_publication_rel pr JOIN pg_publication pb ON pb.oid = pr.prpubid
    ),
    fdw AS (
      SELECT fd.oid, json_build_object('kind','fdw','name',fd.fdwname) AS id
      FROM pg_foreign_data_wrapper fd
    ),
    srv AS (
      SELECT fs.oid, json_build_object('kind','server','name',fs.srvname) AS id
      FROM pg_foreign_server fs
    ),
    adef AS (
      SELECT ad.oid, json_build_object('kind','default','schema',dn.nspname,
                               'table',dc.relname,'name',da.attname) AS id
      FROM pg_attrdef ad
      JOIN pg_class dc ON dc.oid = ad.adrelid
      JOIN pg_namespace dn ON dn.oid = dc.relnamespace
      JOIN pg_attribute da ON da.attrelid = ad.adrelid AND da.attnum = ad.adnum
    ),
    rw AS (
      -- A pg_rewrite endpoint resolves two different ways (issue #333):
      --  - the '_RETURN' rule of a view/matview IS the relation's definition,
      --    so its deps are attributed to the owning view/matview -- rebuilding
      --    the relation recreates the rule. Only views/matviews carry a
      --    '_RETURN' rule, so the relkind CASE only ever sees 'v'/'m' here.
      --  - ANY other (user-created) rule is its OWN rule fact
      --    (src/extract/relations.ts extracts every rulename <> '_RETURN' on any
      --    relkind), so its deps must be attributed to the RULE fact, not the
      --    owning relation. This is what lets a rule on a PLAIN TABLE (relkind
      --    'r'/'p') be rebuilt against a function it references before that
      --    function is dropped. CONSTRAINT: a user rule ON A VIEW (not
      --    '_RETURN') likewise resolves to the rule fact, exactly like a rule on
      --    a table -- never folded into the view's '_RETURN' definition.
      SELECT r.oid,
        CASE WHEN r.rulename = '_RETURN'
          THEN json_build_object(
                 'kind', CASE vc.relkind WHEN 'm' THEN 'materializedView' ELSE 'view' END,
                 'schema', vn.nspname, 'name', vc.relname)
          ELSE json_build_object(
                 'kind', 'rule', 'schema', vn.nspname,
                 'table', vc.relname, 'name', r.rulename)
        END AS id
      FROM pg_rewrite r
      JOIN pg_class vc ON vc.oid = r.ev_class
      JOIN pg_namespace vn ON vn.oid = vc.relnamespace
    ),
    trg AS (
      SELECT tg.oid, json_build_object('kind','trigger','schema',tn.nspname,
                               'table',tc.relname,'name',tg.tgname) AS id
      FROM pg_trigger tg
      JOIN pg_class tc ON tc.oid = tg.tgrelid
      JOIN pg_namespace tn ON tn.oid = tc.relnamespace
      WHERE NOT tg.tgisinternal
    ),
    nsp AS (
      SELECT ns.oid, json_build_object('kind','schema','name',ns.nspname) AS id
      FROM pg_namespace ns
    ),
    -- MATERIALIZED: resolved is referenced twice (rd + rr joins); force a single
    -- evaluation over the distinct endpoint set.
    resolved AS MATERIALIZED (
      SELECT e.classid, e.objid, e.objsubid,
        CASE
          WHEN e.classid = 'pg_class'::regclass AND e.objsubid = 0
            THEN COALESCE(cbi.id, comptype.id, rel.id)
          WHEN e.classid = 'pg_class'::regclass AND e.objsubid > 0
            -- a real column; a composite type's attribute resolves to its type;
            -- else a view/matview column resolves to its relation
            THEN COALESCE(col.id, comptype.id, CASE WHEN rel.relkind IN ('v','m') THEN rel.id END)
          WHEN e.classid = 'pg_proc'::regclass THEN COALESCE(extm.id, proc.id)
          WHEN e.classid = 'pg_constraint'::regclass THEN COALESCE(tcon.id, dcon.id)
          WHEN e.classid = 'pg_type'::regclass THEN COALESCE(extm.id, typ.id)
          WHEN e.classid = 'pg_opclass'::regclass THEN extm.id
          WHEN e.classid = 'pg_opfamily'::regclass THEN extm.id
          WHEN e.classid = 'pg_operator'::regclass THEN extm.id
          WHEN e.classid = 'pg_collation'::regclass THEN coll.id
          WHEN e.classid = 'pg_policy'::regclass THEN pol.id
          WHEN e.classid = 'pg_event_trigger'::regclass THEN evt.id
          WHEN e.classid = 'pg_publication'::regclass THEN pub.id
          WHEN e.classid = 'pg_publication_rel'::regclass THEN pubrel.id
          WHEN e.classid = 'pg_foreign_data_wrapper'::regclass
            THEN COALESCE(extm.id, fdw.id)
          WHEN e.classid = 'pg_foreign_server'::regclass THEN srv.id
          WHEN e.classid = 'pg_attrdef'::regclass THEN adef.id
          WHEN e.classid = 'pg_rewrite'::regclass THEN rw.id
          WHEN e.classid = 'pg_trigger'::regclass THEN trg.id
          WHEN e.classid = 'pg_namespace'::regclass THEN nsp.id
          ELSE NULL
        END AS id
      FROM endpoints e
      LEFT JOIN rel    ON rel.oid    = e.objid AND e.classid = 'pg_class'::regclass
      LEFT JOIN cbi    ON cbi.oid    = e.objid AND e.classid = 'pg_class'::regclass AND e.objsubid = 0
      LEFT JOIN col    ON col.oid    = e.objid AND col.subid = e.objsubid AND e.classid = 'pg_class'::regclass
      LEFT JOIN proc   ON proc.oid   = e.objid AND e.classid = 'pg_proc'::regclass
      LEFT JOIN tcon   ON tcon.oid   = e.objid AND e.classid = 'pg_constraint'::regclass
      LEFT JOIN dcon   ON dcon.oid   = e.objid AND e.classid = 'pg_constraint'::regclass
      LEFT JOIN typ    ON typ.oid    = e.objid AND e.classid = 'pg_type'::regclass
      LEFT JOIN comptype ON comptype.oid = e.objid AND e.classid = 'pg_class'::regclass
      LEFT JOIN extm   ON extm.classid = e.classid AND extm.objid = e.objid
      LEFT JOIN coll   ON coll.oid   = e.objid AND e.classid = 'pg_collation'::regclass
      LEFT JOIN pol    ON pol.oid    = e.objid AND e.classid = 'pg_policy'::regclass
      LEFT JOIN evt    ON evt.oid    = e.objid AND e.classid = 'pg_event_trigger'::regclass
      LEFT JOIN pub    ON pub.oid    = e.objid AND e.classid = 'pg_publication'::regclass
      LEFT JOIN pubrel ON pubrel.oid = e.objid AND e.classid = 'pg_publication_rel'::regclass
      LEFT JOIN fdw    ON fdw.oid    = e.objid AND e.classid = 'pg_foreign_data_wrapper'::regclass
      LEFT JOIN srv    ON srv.oid    = e.objid AND e.classid = 'pg_foreign_server'::regclass
      LEFT JOIN adef   ON adef.oid   = e.objid AND e.classid = 'pg_attrdef'::regclass
      LEFT JOIN rw     ON rw.oid     = e.objid AND e.classid = 'pg_rewrite'::regclass
      LEFT JOIN trg    ON trg.oid    = e.objid AND e.classid = 'pg_trigger'::regclass
      LEFT JOIN nsp    ON nsp.oid    = e.objid AND e.classid = 'pg_namespace'::regclass
    )
    SELECT rd.id AS dependent, rr.id AS referenced
    FROM dep
    JOIN resolved rd ON rd.classid = dep.classid
                    AND rd.objid = dep.objid
                    AND rd.objsubid = dep.objsubid
    JOIN resolved rr ON rr.classid = dep.refclassid
                    AND rr.objid = dep.refobjid
                    AND rr.objsubid = dep.refobjsubid`),e=p=>{if(p==null)return;let l=p;switch(l.kind){case"schema":return{kind:"schema",name:l.name};case"eventTrigger":case"publication":case"fdw":case"server":case"extension":return{kind:l.kind,name:l.name};case"table":case"view":case"materializedView":case"index":case"sequence":case"domain":case"type":case"collation":case"foreignTable":return{kind:l.kind,schema:l.schema,name:l.name};case"column":case"constraint":case"default":case"trigger":case"policy":case"rule":return{kind:l.kind,schema:l.schema,table:l.table,name:l.name};case"function":case"procedure":case"aggregate":return{kind:l.kind,schema:l.schema,name:l.name,args:l.args.map(String)};default:return}},c=p=>{let l=N=>N==="pg_catalog"||N==="information_schema"||N.startsWith("pg_toast")||N.startsWith("pg_temp"),d=p.schema;return typeof d=="string"&&l(d)?!0:p.kind==="schema"?l(p.name):!1},g=(p,l)=>{if(p==null)return;let d=e(p);if(d===void 0)return a.push({code:"unresolved_dependency",severity:"warning",message:`pg_depend ${l} ${JSON.stringify(p)} was recognized by the resolver but the codec could not build its id — resolver/codec mismatch`}),d;if(!c(d))return d},n=new Set,s=new Set(o.facts.filter(p=>p.id.kind==="default").map(p=>R(p.id)));for(let p of t){let l=g(p.dependent,"dependent"),d=g(p.referenced,"referenced");if(!l||!d)continue;let N=JSON.stringify([l,d]);if(!n.has(N)&&(n.add(N),r.push({from:l,to:d,kind:"depends"}),l.kind==="default"&&!s.has(R(l)))){let _={kind:"column",schema:l.schema,table:l.table,name:l.name};if(R(_)===R(d))continue;let v=JSON.stringify([_,d]);if(n.has(v))continue;n.add(v),r.push({from:_,to:d,kind:"depends"})}}}async function F(o){let{q:i,pushWithMeta:r,pushOwnerEdge:a}=o;for(let t of await i(`
    SELECT e.evtname AS name, e.evtevent AS event, e.evtenabled AS enabled,
           COALESCE(e.evttags, '{}')::text[] AS tags,
           pn.nspname AS func_schema, p.proname AS func_name,
           r.rolname AS owner,
           obj_description(e.oid, 'pg_event_trigger') AS comment
    FROM pg_event_trigger e
    JOIN pg_proc p ON p.oid = e.evtfoid
    JOIN pg_namespace pn ON pn.oid = p.pronamespace
    JOIN pg_roles r ON r.oid = e.evtowner
    WHERE ${E("pg_event_trigger","e.oid")}
    ORDER BY e.evtname`)){let e={kind:"eventTrigger",name:String(t.name)};r({id:e,payload:{event:String(t.event),enabled:String(t.enabled),tags:t.tags.map(String).sort(),functionSchema:String(t.func_schema),functionName:String(t.func_name)}},t),a(e,t.owner)}}async function J(o){let{q:i,facts:r,pushWithMeta:a,pushOwnerEdge:t,factDiagnostics:e}=o,c=s=>o.redactSecrets?H(s):s;for(let s of await i(`
    SELECT f.fdwname AS name, r.rolname AS owner,
           CASE WHEN f.fdwhandler <> 0 THEN f.fdwhandler::regproc::text END AS handler,
           CASE WHEN f.fdwvalidator <> 0 THEN f.fdwvalidator::regproc::text END AS validator,
           COALESCE(ARRAY(SELECT opt FROM unnest(f.fdwoptions) opt ORDER BY opt), '{}')::text[] AS options,
           obj_description(f.oid, 'pg_foreign_data_wrapper') AS comment,
           ${h("f.fdwacl","F","f.fdwowner")} AS acl
    FROM pg_foreign_data_wrapper f
    JOIN pg_roles r ON r.oid = f.fdwowner
    WHERE ${E("pg_foreign_data_wrapper","f.oid")}
    ORDER BY f.fdwname`)){let p={kind:"fdw",name:String(s.name)};a({id:p,payload:{handler:s.handler==null?null:s.handler,validator:s.validator==null?null:s.validator,options:c(s.options.map(String))}},s,u(s.acl)),t(p,s.owner)}for(let s of await i(`
    SELECT s.srvname AS name, f.fdwname AS fdw, r.rolname AS owner,
           s.srvtype AS type, s.srvversion AS version,
           (SELECT e.extname FROM pg_depend d
            JOIN pg_extension e ON e.oid = d.refobjid
            WHERE d.classid = 'pg_foreign_data_wrapper'::regclass
              AND d.objid = f.oid
              AND d.refclassid = 'pg_extension'::regclass
              AND d.deptype = 'e'
            LIMIT 1) AS fdw_extension,
           COALESCE(ARRAY(SELECT opt FROM unnest(s.srvoptions) opt ORDER BY opt), '{}')::text[] AS options,
           obj_description(s.oid, 'pg_foreign_server') AS comment,
           ${h("s.srvacl","S","s.srvowner")} AS acl
    FROM pg_foreign_server s
    JOIN pg_foreign_data_wrapper f ON f.oid = s.srvfdw
    JOIN pg_roles r ON r.oid = s.srvowner
    WHERE ${E("pg_foreign_server","s.oid")}
    ORDER BY s.srvname`)){let p={kind:"server",name:String(s.name)};a({id:p,parent:s.fdw_extension!=null?{kind:"extension",name:s.fdw_extension}:{kind:"fdw",name:String(s.fdw)},payload:{fdw:String(s.fdw),type:s.type==null?null:s.type,version:s.version==null?null:s.version,options:c(s.options.map(String))}},s,u(s.acl)),t(p,s.owner)}let g=!!(await i("SELECT has_table_privilege('pg_catalog.pg_user_mapping', 'SELECT') AS ok"))[0]?.ok,n=g?await i(`
    SELECT s.srvname AS server, COALESCE(r.rolname, 'PUBLIC') AS role,
           COALESCE(ARRAY(SELECT opt FROM unnest(u.umoptions) opt ORDER BY opt), '{}')::text[] AS options
    FROM pg_user_mapping u
    JOIN pg_foreign_server s ON s.oid = u.umserver
    LEFT JOIN pg_roles r ON r.oid = u.umuser
    WHERE ${E("pg_foreign_server","s.oid")}
    ORDER BY s.srvname, 2`):await i(`
    SELECT v.srvname AS server,
           CASE WHEN v.umuser = 0 THEN 'PUBLIC' ELSE v.usename END AS role,
           COALESCE(ARRAY(SELECT opt FROM unnest(v.umoptions) opt ORDER BY opt), '{}')::text[] AS options,
           (v.umoptions IS NOT NULL
            OR (v.umuser <> 0 AND v.usename = current_user
                AND (pg_has_role(s.srvowner, 'USAGE') OR has_server_privilege(s.oid, 'USAGE')))
            OR (v.umuser = 0 AND pg_has_role(s.srvowner, 'USAGE'))) AS options_known
    FROM pg_user_mappings v
    JOIN pg_foreign_server s ON s.oid = v.srvid
    WHERE ${E("pg_foreign_server","v.srvid")}
    ORDER BY v.srvname, 2`);for(let s of n){let p=String(s.server),l=String(s.role),d={kind:"userMapping",server:p,role:l};if(!g&&s.options_known===!1){e.push({code:D,severity:"warning",subject:d,message:`User-mapping options for ${p}/${l} are hidden from the current role by pg_user_mappings (it isn't the mapping's server owner, the mapped user, or a member of the PUBLIC mapping's server owner) — the mapping's state is unknown, so it was SKIPPED rather than recorded with fabricated empty options.`});continue}r.push({id:d,parent:{kind:"server",name:p},payload:{options:c(s.options.map(String))}})}for(let s of await i(`
    SELECT n.nspname AS schema, c.relname AS name, r.rolname AS owner,
           s.srvname AS server,
           COALESCE(ARRAY(SELECT opt FROM unnest(ft.ftoptions) opt ORDER BY opt), '{}')::text[] AS options,
           obj_description(c.oid, 'pg_class') AS comment,
           ${h("c.relacl","r","c.relowner")} AS acl
    FROM pg_foreign_table ft
    JOIN pg_class c ON c.oid = ft.ftrelid
    JOIN pg_foreign_server s ON s.oid = ft.ftserver
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_roles r ON r.oid = c.relowner
    WHERE ${m}
      AND ${E("pg_class","c.oid")}
    ORDER BY n.nspname, c.relname`)){let p={kind:"foreignTable",schema:String(s.schema),name:String(s.name)};a({id:p,parent:{kind:"server",name:String(s.server)},payload:{server:String(s.server),options:c(s.options.map(String))}},s,u(s.acl)),t(p,s.owner)}}async function $(o){let{q:i,pushWithMeta:r}=o;for(let a of await i(`
    SELECT n.nspname AS schema, c.relname AS table, pol.polname AS name,
           pol.polcmd AS cmd, pol.polpermissive AS permissive,
           pg_get_expr(pol.polqual, pol.polrelid) AS using_expr,
           pg_get_expr(pol.polwithcheck, pol.polrelid) AS check_expr,
           CASE WHEN pol.polroles = '{0}'::oid[] THEN ARRAY['PUBLIC']::text[]
                ELSE ARRAY(SELECT rolname::text FROM pg_roles WHERE oid = ANY(pol.polroles) ORDER BY rolname)
           END AS roles,
           obj_description(pol.oid, 'pg_policy') AS comment
    FROM pg_policy pol
    JOIN pg_class c ON c.oid = pol.polrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE ${m}
      AND ${E("pg_class","c.oid")}
    ORDER BY n.nspname, c.relname, pol.polname`))r({id:{kind:"policy",schema:String(a.schema),table:String(a.table),name:String(a.name)},parent:{kind:"table",schema:String(a.schema),name:String(a.table)},payload:{cmd:String(a.cmd),permissive:!!a.permissive,usingExpr:a.using_expr==null?null:a.using_expr,checkExpr:a.check_expr==null?null:a.check_expr,roles:a.roles.map(String)}},a)}async function B(o){let{q:i,facts:r,pushWithMeta:a,pushOwnerEdge:t,pgMajor:e}=o,c=e>=15?`(SELECT array_agg(att.attname::text ORDER BY att.attname)
                          FROM unnest(pr.prattrs) WITH ORDINALITY AS pa(attnum, ord)
                          JOIN pg_attribute att ON att.attrelid = pc.oid AND att.attnum = pa.attnum)`:"NULL",g=e>=15?"pg_get_expr(pr.prqual, pr.prrelid)":"NULL",n=e>=15?`(SELECT array_agg(pn2.nspname::text ORDER BY 1)
            FROM pg_publication_namespace pns
            JOIN pg_namespace pn2 ON pn2.oid = pns.pnnspid
            WHERE pns.pnpubid = p.oid)`:"NULL::text[]";for(let s of await i(`
    SELECT p.pubname AS name, r.rolname AS owner,
           p.puballtables AS all_tables, p.pubviaroot AS via_root,
           p.pubinsert, p.pubupdate, p.pubdelete, p.pubtruncate,
           (SELECT json_agg(json_build_object(
              'schema', pn.nspname, 'name', pc.relname,
              'columns', ${c},
              'where', ${g}
            ) ORDER BY pn.nspname, pc.relname)
            FROM pg_publication_rel pr
            JOIN pg_class pc ON pc.oid = pr.prrelid
            JOIN pg_namespace pn ON pn.oid = pc.relnamespace
            WHERE pr.prpubid = p.oid) AS tables,
           ${n} AS schemas,
           obj_description(p.oid, 'pg_publication') AS comment
    FROM pg_publication p
    JOIN pg_roles r ON r.oid = p.pubowner
    WHERE ${E("pg_publication","p.oid")}
    ORDER BY p.pubname`)){let p=[];s.pubinsert&&p.push("insert"),s.pubupdate&&p.push("update"),s.pubdelete&&p.push("delete"),s.pubtruncate&&p.push("truncate");let l=String(s.name),d={kind:"publication",name:l};a({id:d,payload:{allTables:!!s.all_tables,viaRoot:!!s.via_root,publish:p}},s),t(d,s.owner);let N=s.tables??[];for(let _ of N)r.push({id:{kind:"publicationRel",publication:l,schema:_.schema,table:_.name},parent:d,payload:{columns:_.columns==null?null:_.columns.map(String),where:_.where??null}});for(let _ of(s.schemas??[]).map(String))r.push({id:{kind:"publicationSchema",publication:l,schema:_},parent:d,payload:{}})}}async function Y(o){let{q:i,pushWithMeta:r,pushOwnerEdge:a,pgMajor:t}=o,e=t>=16?"CASE s.substream WHEN 'p' THEN 'parallel' WHEN 't' THEN 'on' ELSE 'off' END":"CASE WHEN s.substream THEN 'on' ELSE 'off' END",c=t>=15?"s.subdisableonerr":"NULL::boolean",g=t>=15?"(s.subtwophasestate <> 'd')":"NULL::boolean",n=t>=16?"s.subrunasowner":"NULL::boolean",s=t>=16?"s.suborigin":"NULL::text",l=!!(await i("SELECT has_column_privilege('pg_subscription', 'subconninfo', 'SELECT') AS ok"))[0]?.ok?"s.subconninfo":"NULL::text";for(let d of await i(`
    SELECT s.subname AS name, r.rolname AS owner, s.subenabled AS enabled,
           ${l} AS conninfo, s.subslotname AS slot_name,
           s.subpublications::text[] AS publications,
           s.subbinary AS binary,
           ${e} AS streaming,
           s.subsynccommit AS synchronous_commit,
           ${c} AS disable_on_error,
           ${g} AS two_phase,
           ${n} AS run_as_owner,
           ${s} AS origin,
           obj_description(s.oid, 'pg_subscription') AS comment
    FROM pg_subscription s
    JOIN pg_roles r ON r.oid = s.subowner
    JOIN pg_database d ON d.oid = s.subdbid
    WHERE d.datname = current_database()
    ORDER BY s.subname`)){let N={kind:"subscription",name:String(d.name)};r({id:N,payload:{_serverMajor:t,enabled:!!d.enabled,conninfo:o.redactSecrets||d.conninfo==null?C:d.conninfo,slotName:d.slot_name==null?null:d.slot_name,publications:d.publications.map(String).sort(),binary:!!d.binary,streaming:String(d.streaming),synchronousCommit:String(d.synchronous_commit),disableOnError:d.disable_on_error==null?null:!!d.disable_on_error,twoPhase:d.two_phase==null?null:!!d.two_phase,runAsOwner:d.run_as_owner==null?null:!!d.run_as_owner,origin:d.origin==null?null:d.origin}},d),a(N,d.owner)}}function U(o){let i=o.reloptions;if(i==null)return null;let r=i.slice().sort();return r.length>0?r:null}async function q(o){let{q:i,pushWithMeta:r,pushMemberEdge:a,pushOwnerEdge:t}=o;for(let e of await i(`
    SELECT n.nspname AS schema, c.relname AS name, r.rolname AS owner,
           c.relpersistence AS persistence,
           c.relrowsecurity AS row_security,
           c.relforcerowsecurity AS force_row_security,
           c.relreplident AS replica_identity,
           (SELECT ic.relname FROM pg_index i
            JOIN pg_class ic ON ic.oid = i.indexrelid
            WHERE i.indrelid = c.oid AND i.indisreplident) AS replica_identity_index,
           CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END AS partition_key,
           c.reloptions AS reloptions,
           pg_get_expr(c.relpartbound, c.oid) AS partition_bound,
           (SELECT json_build_object('schema', pn.nspname, 'name', pc.relname)
            FROM pg_inherits inh
            JOIN pg_class pc ON pc.oid = inh.inhparent
            JOIN pg_namespace pn ON pn.oid = pc.relnamespace
            WHERE inh.inhrelid = c.oid
            -- Multi-parent support is tracked separately; until then capture the
            -- FIRST-declared parent deterministically. Without ORDER BY the
            -- unordered LIMIT 1 can pick a different parent across extractions,
            -- flapping the fact hash and causing spurious table replaces.
            ORDER BY inh.inhseqno
            LIMIT 1) AS parent_table,
           obj_description(c.oid, 'pg_class') AS comment,
           ${A("c.relacl","r","c.relowner","pg_class","c.oid")} AS acl,
           ${f("pg_class","c.oid")} AS ext_member_of
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_roles r ON r.oid = c.relowner
    WHERE c.relkind IN ('r', 'p') AND ${m}
    ORDER BY n.nspname, c.relname`)){let c={kind:"table",schema:String(e.schema),name:String(e.name)};r({id:c,parent:O(e.schema),payload:{persistence:String(e.persistence),rowSecurity:!!e.row_security,forceRowSecurity:!!e.force_row_security,replicaIdentity:String(e.replica_identity),replicaIdentityIndex:e.replica_identity_index==null?null:e.replica_identity_index,partitionKey:e.partition_key==null?null:e.partition_key,partitionBound:e.partition_bound==null?null:e.partition_bound,parentTable:e.parent_table==null?null:e.parent_table,reloptions:U(e)}},e,u(e.acl)),a(c,e),t(c,e.owner)}}async function P(o){let{q:i,facts:r,pushWithMeta:a}=o;for(let t of await i(`
    SELECT n.nspname AS schema, c.relname AS table, a.attname AS name,
           a.attnum AS position,
           c.relkind AS table_kind,
           format_type(a.atttypid, a.atttypmod) AS type,
           a.attnotnull AS not_null,
           NULLIF(a.attidentity, '') AS identity,
           (SELECT json_build_object('schema', sn.nspname, 'name', sc.relname)
            FROM pg_depend d
            JOIN pg_class sc ON sc.oid = d.objid
            JOIN pg_namespace sn ON sn.oid = sc.relnamespace
            WHERE d.classid = 'pg_class'::regclass
              AND d.refclassid = 'pg_class'::regclass
              AND d.refobjid = c.oid AND d.refobjsubid = a.attnum
              AND d.deptype = 'i' AND sc.relkind = 'S'
            LIMIT 1) AS identity_sequence,
           (SELECT json_build_object(
                     'increment', sq.seqincrement::text, 'start', sq.seqstart::text,
                     'minValue', sq.seqmin::text, 'maxValue', sq.seqmax::text,
                     'cache', sq.seqcache::text, 'cycle', sq.seqcycle)
            FROM pg_depend d
            JOIN pg_sequence sq ON sq.seqrelid = d.objid
            WHERE d.classid = 'pg_class'::regclass
              AND d.refclassid = 'pg_class'::regclass
              AND d.refobjid = c.oid AND d.refobjsubid = a.attnum
              AND d.deptype = 'i'
            LIMIT 1) AS identity_options,
           NULLIF(a.attgenerated, '') AS generated,
           CASE WHEN a.attcollation <> t.typcollation THEN (
             SELECT quote_ident(cn.nspname) || '.' || quote_ident(co.collname)
             FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
             WHERE co.oid = a.attcollation)
           END AS collation,
           pg_get_expr(ad.adbin, ad.adrelid) AS default_expr,
           col_description(c.oid, a.attnum) AS comment,
           -- column-level ACL (pg_attribute.attacl). Columns have no built-in
           -- default privileges, so acldefault('c', owner) is empty: a NULL
           -- attacl yields no acl facts, and a non-NULL one lists only explicit
           -- GRANT SELECT/INSERT/UPDATE/REFERENCES (col) entries.
           ${h("a.attacl","c","c.relowner")} AS acl
    FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_type t ON t.oid = a.atttypid
    LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
    WHERE c.relkind IN ('r', 'p', 'f') AND a.attnum > 0 AND NOT a.attisdropped
      AND a.attislocal
      AND ${m}
      AND ${E("pg_class","c.oid")}
    ORDER BY n.nspname, c.relname, a.attname`)){let e={kind:String(t.table_kind)==="f"?"foreignTable":"table",schema:String(t.schema),name:String(t.table)},c={kind:"column",schema:String(t.schema),table:String(t.table),name:String(t.name)},g=t.generated!=null;a({id:c,parent:e,payload:{_position:Number(t.position),type:String(t.type),notNull:!!t.not_null,identity:t.identity==null?null:{generation:t.identity,sequence:t.identity_sequence,options:t.identity_options==null?null:t.identity_options},collation:t.collation==null?null:t.collation,generatedExpr:g&&t.default_expr!=null?t.default_expr:null}},t),!g&&t.default_expr!=null&&r.push({id:{kind:"default",schema:String(t.schema),table:String(t.table),name:String(t.name)},parent:c,payload:{expr:t.default_expr}});for(let n of u(t.acl))r.push({id:{kind:"acl",target:e,grantee:n.grantee,column:String(t.name)},parent:c,payload:{privileges:n.privileges,grantable:n.grantable}})}}async function G(o){let{q:i,pushWithMeta:r}=o;for(let a of await i(`
    SELECT n.nspname AS schema, c.relname AS table, con.conname AS name,
           c.relkind AS table_kind,
           pg_get_constraintdef(con.oid) AS def,
           con.contype AS type, con.convalidated AS validated,
           obj_description(con.oid, 'pg_constraint') AS comment
    FROM pg_constraint con
    JOIN pg_class c ON c.oid = con.conrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    -- 'f' = foreign tables: they carry only CHECK constraints (no p/u/f/x),
    -- so the contype filter already scopes them; serialized via ALTER FOREIGN
    -- TABLE (constraintTarget keys off the parent's foreignTable kind).
    WHERE con.contype IN ('p', 'u', 'f', 'c', 'x') AND con.conislocal
      AND c.relkind IN ('r', 'p', 'f') AND ${m}
      AND ${E("pg_class","c.oid")}
    ORDER BY n.nspname, c.relname, con.conname`))r({id:{kind:"constraint",schema:String(a.schema),table:String(a.table),name:String(a.name)},parent:{kind:String(a.table_kind)==="f"?"foreignTable":"table",schema:String(a.schema),name:String(a.table)},payload:{def:String(a.def),type:String(a.type),validated:!!a.validated}},a)}async function V(o){let{q:i,pushWithMeta:r}=o;for(let a of await i(`
    SELECT n.nspname AS schema, ic.relname AS name, c.relname AS table,
           c.relkind AS table_kind,
           pg_get_indexdef(i.indexrelid) AS def,
           -- A partitioned PARENT index (relkind 'I') is legitimately
           -- indisvalid=false whenever a child index is unattached, and
           -- pg_get_indexdef renders it as CREATE INDEX ... ON ONLY ..., which
           -- itself produces an invalid parent (children attach separately). So
           -- its indisvalid is attach-state, not repair-worthy corruption:
           -- force it valid here so it never drives a diff (the unmodeled
           -- attach-state stays tracked in #332). Only REGULAR indexes ('i')
           -- carry their real indisvalid, which is what catches a failed
           -- CREATE INDEX CONCURRENTLY.
           CASE WHEN ic.relkind = 'I' THEN true ELSE i.indisvalid END AS valid,
           obj_description(i.indexrelid, 'pg_class') AS comment
    FROM pg_index i
    JOIN pg_class ic ON ic.oid = i.indexrelid
    JOIN pg_class c ON c.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = ic.relnamespace
    WHERE c.relkind IN ('r', 'p', 'm') AND ${m}
      -- Exclude indexes OWNED by a constraint (PRIMARY KEY / UNIQUE / EXCLUSION),
      -- which are serialized via the constraint, not as standalone CREATE INDEX.
      -- Gate on contype: a FOREIGN KEY constraint also sets conindid — to the
      -- index on the REFERENCED table it depends on — so an unqualified check
      -- wrongly drops a standalone unique index the moment any FK references it
      -- (regression: realtime.tenants' unique index on external_id, referenced by
      -- an FK from _realtime.extensions, vanished from extraction).
      AND NOT EXISTS (
        SELECT 1 FROM pg_constraint pc
        WHERE pc.conindid = i.indexrelid AND pc.contype IN ('p', 'u', 'x')
      )
      AND NOT EXISTS (SELECT 1 FROM pg_inherits ih WHERE ih.inhrelid = i.indexrelid)
      AND ${E("pg_class","c.oid")}
    ORDER BY n.nspname, ic.relname`)){let t=String(a.table_kind)==="m"?"materializedView":"table";r({id:{kind:"index",schema:String(a.schema),name:String(a.name)},parent:{kind:t,schema:String(a.schema),name:String(a.table)},payload:{def:String(a.def),valid:!!a.valid}},a)}}async function K(o){let{q:i,pushWithMeta:r,pushMemberEdge:a,pushOwnerEdge:t}=o;for(let e of await i(`
    SELECT n.nspname AS schema, c.relname AS name, r.rolname AS owner,
           format_type(s.seqtypid, NULL) AS data_type,
           s.seqstart::text AS start, s.seqincrement::text AS increment,
           s.seqmin::text AS min_value, s.seqmax::text AS max_value,
           s.seqcache::text AS cache, s.seqcycle AS cycle,
           (SELECT json_build_object('schema', tn.nspname, 'table', tc.relname,
                                     'column', ta.attname)
            FROM pg_depend od
            JOIN pg_class tc ON tc.oid = od.refobjid
            JOIN pg_namespace tn ON tn.oid = tc.relnamespace
            JOIN pg_attribute ta ON ta.attrelid = tc.oid AND ta.attnum = od.refobjsubid
            WHERE od.classid = 'pg_class'::regclass AND od.objid = c.oid
              AND od.refclassid = 'pg_class'::regclass AND od.deptype = 'a'
              AND od.refobjsubid > 0
            LIMIT 1) AS owned_by,
           obj_description(c.oid, 'pg_class') AS comment,
           ${A("c.relacl","s","c.relowner","pg_class","c.oid")} AS acl,
           ${f("pg_class","c.oid")} AS ext_member_of
    FROM pg_sequence s
    JOIN pg_class c ON c.oid = s.seqrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_roles r ON r.oid = c.relowner
    WHERE ${m}
      AND NOT EXISTS (
        SELECT 1 FROM pg_depend d
        WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
          AND d.deptype = 'i')
    ORDER BY n.nspname, c.relname`)){let c={kind:"sequence",schema:String(e.schema),name:String(e.name)};r({id:c,parent:O(e.schema),payload:{dataType:String(e.data_type),start:String(e.start),increment:String(e.increment),minValue:String(e.min_value),maxValue:String(e.max_value),cache:String(e.cache),cycle:!!e.cycle,ownedBy:e.owned_by==null?null:e.owned_by}},e,u(e.acl)),a(c,e),t(c,e.owner)}}async function X(o){let{q:i,pushWithMeta:r,pushMemberEdge:a,pushOwnerEdge:t}=o;for(let e of await i(`
    SELECT n.nspname AS schema, c.relname AS name, r.rolname AS owner,
           c.relkind AS kind,
           pg_get_viewdef(c.oid) AS def,
           c.reloptions AS reloptions,
           obj_description(c.oid, 'pg_class') AS comment,
           ${A("c.relacl","r","c.relowner","pg_class","c.oid")} AS acl,
           ${f("pg_class","c.oid")} AS ext_member_of
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_roles r ON r.oid = c.relowner
    WHERE c.relkind IN ('v', 'm') AND ${m}
    ORDER BY n.nspname, c.relname`)){let c={kind:String(e.kind)==="m"?"materializedView":"view",schema:String(e.schema),name:String(e.name)};r({id:c,parent:O(e.schema),payload:{def:String(e.def),reloptions:U(e)}},e,u(e.acl)),a(c,e),t(c,e.owner)}}async function z(o){let{q:i,pushWithMeta:r}=o;for(let a of await i(`
    SELECT n.nspname AS schema, c.relname AS table, t.tgname AS name,
           c.relkind AS table_kind,
           pg_get_triggerdef(t.oid) AS def,
           t.tgenabled AS enabled,
           obj_description(t.oid, 'pg_trigger') AS comment
    FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND ${m}
      AND ${E("pg_class","c.oid")}
    ORDER BY n.nspname, c.relname, t.tgname`)){let t=String(a.table_kind);r({id:{kind:"trigger",schema:String(a.schema),table:String(a.table),name:String(a.name)},parent:{kind:t==="v"?"view":t==="m"?"materializedView":t==="f"?"foreignTable":"table",schema:String(a.schema),name:String(a.table)},payload:{def:String(a.def),enabled:String(a.enabled)}},a)}}async function Q(o){let{q:i,pushWithMeta:r}=o;for(let a of await i(`
    SELECT n.nspname AS schema, c.relname AS table, c.relkind AS table_kind,
           rw.rulename AS name, pg_get_ruledef(rw.oid) AS def,
           rw.ev_enabled AS enabled,
           obj_description(rw.oid, 'pg_rewrite') AS comment
    FROM pg_rewrite rw
    JOIN pg_class c ON c.oid = rw.ev_class
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE rw.rulename <> '_RETURN' AND ${m}
      AND ${E("pg_class","c.oid")}
    ORDER BY n.nspname, c.relname, rw.rulename`)){let t=String(a.table_kind);r({id:{kind:"rule",schema:String(a.schema),table:String(a.table),name:String(a.name)},parent:{kind:t==="v"?"view":t==="m"?"materializedView":"table",schema:String(a.schema),name:String(a.table)},payload:{def:String(a.def),enabled:String(a.enabled)}},a)}}async function Z(o){let{q:i,facts:r}=o;for(let t of await i(`
    SELECT r.rolname AS name, r.rolsuper, r.rolinherit, r.rolcreaterole,
           r.rolcreatedb, r.rolcanlogin, r.rolreplication, r.rolbypassrls,
           COALESCE((SELECT array_agg(cfg ORDER BY cfg)
                     FROM pg_db_role_setting s, unnest(s.setconfig) cfg
                     WHERE s.setrole = r.oid AND s.setdatabase = 0),
                    '{}')::text[] AS config
    FROM pg_roles r
    WHERE r.rolname NOT LIKE 'pg\\_%'
    ORDER BY r.rolname`))r.push({id:{kind:"role",name:String(t.name)},payload:{superuser:!!t.rolsuper,inherit:!!t.rolinherit,createRole:!!t.rolcreaterole,createDb:!!t.rolcreatedb,login:!!t.rolcanlogin,replication:!!t.rolreplication,bypassRls:!!t.rolbypassrls,config:t.config.map(String)}});for(let t of await i(`
    SELECT r1.rolname AS role, r2.rolname AS member,
           bool_or(m.admin_option) AS admin
    FROM pg_auth_members m
    JOIN pg_roles r1 ON r1.oid = m.roleid
    JOIN pg_roles r2 ON r2.oid = m.member
    WHERE r1.rolname NOT LIKE 'pg\\_%' AND r2.rolname NOT LIKE 'pg\\_%'
    GROUP BY 1, 2
    ORDER BY 1, 2`))r.push({id:{kind:"membership",role:String(t.role),member:String(t.member)},payload:{admin:!!t.admin}});let a="CASE d.defaclobjtype WHEN 'S' THEN 's' ELSE d.defaclobjtype END";for(let t of await i(`
    SELECT dr.rolname AS role, n.nspname AS schema, d.defaclobjtype AS objtype,
           acl.grantee_name AS grantee, acl.privileges, acl.grantable,
           acl.revoked_default
    FROM pg_default_acl d
    JOIN pg_roles dr ON dr.oid = d.defaclrole
    LEFT JOIN pg_namespace n ON n.oid = d.defaclnamespace,
    LATERAL (
      WITH stored AS (
        SELECT e.grantee AS grantee_oid,
               COALESCE(g.rolname, 'PUBLIC') AS grantee_name,
               array_agg(e.privilege_type ORDER BY e.privilege_type) AS privileges,
               array_agg(e.privilege_type ORDER BY e.privilege_type)
                 FILTER (WHERE e.is_grantable) AS grantable
        FROM aclexplode(d.defaclacl) e
        LEFT JOIN pg_roles g ON g.oid = e.grantee
        GROUP BY 1, 2
      ),
      def AS (
        SELECT x.grantee AS grantee_oid,
               array_agg(x.privilege_type ORDER BY x.privilege_type) AS privileges
        FROM aclexplode(acldefault(${a}, d.defaclrole)) x
        GROUP BY 1
      )
      -- present grantees whose privileges DEVIATE from the built-in default
      SELECT s.grantee_name, s.privileges, s.grantable, NULL::text[] AS revoked_default
      FROM stored s
      LEFT JOIN def dd ON dd.grantee_oid = s.grantee_oid
      WHERE s.privileges IS DISTINCT FROM dd.privileges
         OR s.grantable IS NOT NULL
      UNION ALL
      -- grantees that HAVE a built-in default but are ABSENT (revoked). The
      -- grantor's OWN self-entry is a special case: its absence is a behavioral
      -- no-op in two shapes (canonicalize by never emitting a marker), but a
      -- REAL revoke in a third (emit the marker):
      --   • PER-SCHEMA row (defaclnamespace <> 0): Postgres ALWAYS re-adds the
      --     owner's acldefault entry at object-creation time → no-op.
      --   • BARE GLOBAL row with an EMPTY stored acl (the owner-revoke is the
      --     only customization): the created table's relacl degenerates to NULL
      --     and the owner keeps its privileges → no-op.
      --   • GLOBAL row that still carries OTHER grantees: Postgres uses the
      --     stored acl VERBATIM at creation, so an object made by the owner
      --     really lacks the owner's own privileges → a genuine customization
      --     that must round-trip → emit the marker.
      SELECT CASE WHEN dd.grantee_oid = 0 THEN 'PUBLIC'
                  ELSE (SELECT rolname FROM pg_roles WHERE oid = dd.grantee_oid) END,
             ARRAY[]::text[], NULL::text[], dd.privileges
      FROM def dd
      WHERE NOT EXISTS (SELECT 1 FROM stored s WHERE s.grantee_oid = dd.grantee_oid)
        AND (
          -- a non-owner absentee is always a real revoke
          dd.grantee_oid <> d.defaclrole
          -- the owner's OWN absence is a real revoke ONLY on a GLOBAL row that
          -- still carries other grantees (per-schema → owner re-merged at CREATE;
          -- bare empty global row → owner keeps privileges — both no-ops)
          OR (d.defaclnamespace = 0 AND EXISTS (SELECT 1 FROM stored s2))
        )
    ) acl
    ORDER BY 1, 2, 3, 4`)){let e=t.revoked_default??null;r.push({id:{kind:"defaultPrivilege",role:String(t.role),schema:t.schema==null?null:t.schema,objtype:String(t.objtype),grantee:String(t.grantee)},payload:{privileges:t.privileges.map(String),grantable:(t.grantable??[]).map(String),...e!=null?{_revokedDefault:e.map(String)}:{}}})}}async function ee(o){let{q:i,pushWithMeta:r,pushMemberEdge:a,pushOwnerEdge:t}=o;for(let e of await i(`
    SELECT n.nspname AS schema, p.proname AS name, r.rolname AS owner,
           p.prokind AS prokind,
           ARRAY(SELECT format_type(t.t, NULL)
                 FROM unnest(p.proargtypes) WITH ORDINALITY AS t(t, ord)
                 ORDER BY t.ord)::text[] AS identity_args,
           pg_get_functiondef(p.oid) AS def,
           pg_get_function_result(p.oid) AS return_type,
           pg_get_function_arguments(p.oid) AS arg_signature,
           -- proconfig GUC NAMES only (name=value split in POSTGRES, never in
           -- TS): a structured, non-semantic duplicate of the routine's SET
           -- header clauses used purely for the seed replayability decision.
           (SELECT array_agg(split_part(c, '=', 1))
              FROM unnest(p.proconfig) AS c) AS config_gucs,
           l.lanname AS language,
           obj_description(p.oid, 'pg_proc') AS comment,
           ${A("p.proacl","f","p.proowner","pg_proc","p.oid")} AS acl,
           ${f("pg_proc","p.oid")} AS ext_member_of
    FROM pg_proc p
    JOIN pg_namespace n ON n.oid = p.pronamespace
    JOIN pg_roles r ON r.oid = p.proowner
    JOIN pg_language l ON l.oid = p.prolang
    WHERE p.prokind IN ('f', 'p', 'w') AND ${m}
      AND NOT EXISTS (
        SELECT 1 FROM pg_depend idep
        WHERE idep.classid = 'pg_proc'::regclass AND idep.objid = p.oid
          AND idep.deptype = 'i')
    ORDER BY n.nspname, p.proname`)){let c=e.identity_args.map(String),g=(e.config_gucs??[]).map(String),n={kind:String(e.prokind)==="p"?"procedure":"function",schema:String(e.schema),name:String(e.name),args:c};r({id:n,parent:O(e.schema),payload:{def:String(e.def),returnType:e.return_type==null?null:e.return_type,argSignature:String(e.arg_signature),language:String(e.language),isWindow:String(e.prokind)==="w",...g.length>0?{_configGucs:g}:{}}},e,u(e.acl)),a(n,e),t(n,e.owner)}}async function ne(o){let{q:i,pushWithMeta:r,pushMemberEdge:a,pushOwnerEdge:t}=o;for(let e of await i(`
    SELECT n.nspname AS schema, p.proname AS name, r.rolname AS owner,
           ARRAY(SELECT format_type(t.t, NULL)
                 FROM unnest(p.proargtypes) WITH ORDINALITY AS t(t, ord)
                 ORDER BY t.ord)::text[] AS identity_args,
           a.aggkind AS agg_kind, a.aggnumdirectargs AS num_direct_args,
           a.aggtransfn::regproc::text AS sfunc,
           format_type(a.aggtranstype, NULL) AS stype,
           a.aggtransspace AS sspace,
           CASE WHEN a.aggfinalfn <> 0 THEN a.aggfinalfn::regproc::text END AS finalfunc,
           a.aggfinalextra AS finalfunc_extra,
           a.aggfinalmodify AS finalfunc_modify,
           CASE WHEN a.aggcombinefn <> 0 THEN a.aggcombinefn::regproc::text END AS combinefunc,
           CASE WHEN a.aggserialfn <> 0 THEN a.aggserialfn::regproc::text END AS serialfunc,
           CASE WHEN a.aggdeserialfn <> 0 THEN a.aggdeserialfn::regproc::text END AS deserialfunc,
           CASE WHEN a.aggmtransfn <> 0 THEN a.aggmtransfn::regproc::text END AS msfunc,
           CASE WHEN a.aggminvtransfn <> 0 THEN a.aggminvtransfn::regproc::text END AS minvfunc,
           CASE WHEN a.aggmtranstype <> 0 THEN format_type(a.aggmtranstype, NULL) END AS mstype,
           a.aggmtransspace AS msspace,
           CASE WHEN a.aggmfinalfn <> 0 THEN a.aggmfinalfn::regproc::text END AS mfinalfunc,
           a.aggmfinalextra AS mfinalfunc_extra,
           a.aggmfinalmodify AS mfinalfunc_modify,
           a.agginitval AS initcond,
           a.aggminitval AS minitcond,
           CASE WHEN a.aggsortop <> 0 THEN (
             SELECT 'OPERATOR(' || quote_ident(opn.nspname) || '.' || o.oprname || ')'
             FROM pg_operator o
             JOIN pg_namespace opn ON opn.oid = o.oprnamespace
             WHERE o.oid = a.aggsortop) END AS sortop,
           p.proparallel AS parallel,
           obj_description(p.oid, 'pg_proc') AS comment,
           ${A("p.proacl","f","p.proowner","pg_proc","p.oid")} AS acl,
           ${f("pg_proc","p.oid")} AS ext_member_of
    FROM pg_proc p
    JOIN pg_aggregate a ON a.aggfnoid = p.oid
    JOIN pg_namespace n ON n.oid = p.pronamespace
    JOIN pg_roles r ON r.oid = p.proowner
    WHERE p.prokind = 'a' AND ${m}
    ORDER BY n.nspname, p.proname`)){let c={kind:"aggregate",schema:String(e.schema),name:String(e.name),args:e.identity_args.map(String)};r({id:c,parent:O(e.schema),payload:{aggKind:String(e.agg_kind),numDirectArgs:Number(e.num_direct_args),sfunc:String(e.sfunc),stype:String(e.stype),sspace:Number(e.sspace),finalfunc:e.finalfunc==null?null:e.finalfunc,finalfuncExtra:!!e.finalfunc_extra,finalfuncModify:String(e.finalfunc_modify),combinefunc:e.combinefunc==null?null:e.combinefunc,serialfunc:e.serialfunc==null?null:e.serialfunc,deserialfunc:e.deserialfunc==null?null:e.deserialfunc,msfunc:e.msfunc==null?null:e.msfunc,minvfunc:e.minvfunc==null?null:e.minvfunc,mstype:e.mstype==null?null:e.mstype,msspace:Number(e.msspace),mfinalfunc:e.mfinalfunc==null?null:e.mfinalfunc,mfinalfuncExtra:!!e.mfinalfunc_extra,mfinalfuncModify:String(e.mfinalfunc_modify),initcond:e.initcond==null?null:e.initcond,minitcond:e.minitcond==null?null:e.minitcond,sortop:e.sortop==null?null:e.sortop,parallel:String(e.parallel)}},e,u(e.acl)),a(c,e),t(c,e.owner)}}async function te(o){let{q:i,pushWithMeta:r,pushMemberEdge:a,pushOwnerEdge:t}=o;for(let e of await i(`
    SELECT n.nspname AS name, r.rolname AS owner,
           obj_description(n.oid, 'pg_namespace') AS comment,
           ${A("n.nspacl","n","n.nspowner","pg_namespace","n.oid")} AS acl,
           ${f("pg_namespace","n.oid")} AS ext_member_of
    FROM pg_namespace n
    JOIN pg_roles r ON r.oid = n.nspowner
    WHERE ${m}
    ORDER BY n.nspname`)){let c={kind:"schema",name:String(e.name)};r({id:c,payload:{}},e,u(e.acl)),a(c,e),t(c,e.owner)}for(let e of await i(`
    SELECT e.extname AS name, n.nspname AS schema,
           e.extrelocatable AS relocatable,
           obj_description(e.oid, 'pg_extension') AS comment
    FROM pg_extension e
    JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname <> 'plpgsql'
    ORDER BY e.extname`))r({id:{kind:"extension",name:String(e.name)},payload:{schema:String(e.schema),relocatable:!!e.relocatable}},e)}var ae={r:"table",p:"table",v:"view",m:"materializedView",S:"sequence",f:"foreignTable"},ie=new Set(["r","p","f"]),ue=["pg_proc","pg_namespace","pg_event_trigger","pg_publication","pg_subscription"];function re(o){return`(${o}.typtype IN ('d', 'e', 'r')
    OR (${o}.typtype = 'c' AND EXISTS (
      SELECT 1 FROM pg_class tc WHERE tc.oid = ${o}.typrelid AND tc.relkind = 'c')))`}async function oe(o){let{q:i,pushSeclabel:r,diagnostics:a}=o;if(!!!(await i(`SELECT EXISTS (SELECT 1 FROM pg_seclabel)
              OR EXISTS (SELECT 1 FROM pg_shseclabel) AS present`))[0]?.present)return;for(let n of await i(`
      SELECT sl.provider, sl.label, sl.objsubid,
             n.nspname AS schema, c.relname AS name, c.relkind AS relkind,
             a.attname AS column
      FROM pg_seclabel sl
      JOIN pg_class c ON c.oid = sl.objoid AND sl.classoid = 'pg_class'::regclass
      JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = sl.objsubid
      WHERE ${m}
      ORDER BY 1, 4, 5`)){let s=String(n.schema),p=String(n.relkind);if(Number(n.objsubid)>0){ie.has(p)&&r({kind:"column",schema:s,table:String(n.name),name:String(n.column)},String(n.provider),String(n.label));continue}let l=ae[p];l!==void 0&&r({kind:l,schema:s,name:String(n.name)},String(n.provider),String(n.label))}for(let n of await i(`
      SELECT sl.provider, sl.label, n.nspname AS schema, p.proname AS name,
             p.prokind AS prokind,
             ARRAY(SELECT format_type(t.t, NULL)
                   FROM unnest(p.proargtypes) WITH ORDINALITY AS t(t, ord)
                   ORDER BY t.ord)::text[] AS args
      FROM pg_seclabel sl
      JOIN pg_proc p ON p.oid = sl.objoid AND sl.classoid = 'pg_proc'::regclass
      JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE ${m}
      ORDER BY 1, 3, 4`)){let s=String(n.prokind);r({kind:s==="a"?"aggregate":s==="p"?"procedure":"function",schema:String(n.schema),name:String(n.name),args:n.args.map(String)},String(n.provider),String(n.label))}for(let n of await i(`
      SELECT sl.provider, sl.label, n.nspname AS name
      FROM pg_seclabel sl
      JOIN pg_namespace n ON n.oid = sl.objoid AND sl.classoid = 'pg_namespace'::regclass
      WHERE n.nspname NOT IN ${w} AND n.nspname NOT LIKE 'pg\\_%'
      ORDER BY 1, 3`))r({kind:"schema",name:String(n.name)},String(n.provider),String(n.label));for(let n of await i(`
      SELECT sl.provider, sl.label, n.nspname AS schema, t.typname AS name,
             t.typtype AS typtype
      FROM pg_seclabel sl
      JOIN pg_type t ON t.oid = sl.objoid AND sl.classoid = 'pg_type'::regclass
      JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE ${m} AND ${re("t")}
      ORDER BY 1, 3, 4`))r({kind:String(n.typtype)==="d"?"domain":"type",schema:String(n.schema),name:String(n.name)},String(n.provider),String(n.label));for(let n of await i(`
      SELECT sl.provider, sl.label, e.evtname AS name
      FROM pg_seclabel sl
      JOIN pg_event_trigger e ON e.oid = sl.objoid AND sl.classoid = 'pg_event_trigger'::regclass
      WHERE ${E("pg_event_trigger","e.oid")}
      ORDER BY 1, 3`))r({kind:"eventTrigger",name:String(n.name)},String(n.provider),String(n.label));for(let n of await i(`
      SELECT sl.provider, sl.label, p.pubname AS name
      FROM pg_seclabel sl
      JOIN pg_publication p ON p.oid = sl.objoid AND sl.classoid = 'pg_publication'::regclass
      WHERE ${E("pg_publication","p.oid")}
      ORDER BY 1, 3`))r({kind:"publication",name:String(n.name)},String(n.provider),String(n.label));for(let n of await i(`
      SELECT sl.provider, sl.label, s.subname AS name
      FROM pg_seclabel sl
      JOIN pg_subscription s ON s.oid = sl.objoid AND sl.classoid = 'pg_subscription'::regclass
      ORDER BY 1, 3`))r({kind:"subscription",name:String(n.name)},String(n.provider),String(n.label));for(let n of await i(`
      SELECT sl.provider, sl.label, r.rolname AS name
      FROM pg_shseclabel sl
      JOIN pg_roles r ON r.oid = sl.objoid AND sl.classoid = 'pg_authid'::regclass
      WHERE r.rolname NOT LIKE 'pg\\_%'
      ORDER BY 1, 3`))r({kind:"role",name:String(n.name)},String(n.provider),String(n.label));let e=ue.map(n=>`'${n}'::regclass`).join(", "),c=Object.keys(ae).map(n=>`'${n}'`).join(", "),g=[...ie].map(n=>`'${n}'`).join(", ");for(let n of await i(`
      SELECT obj_class,
             count(*)::int AS count,
             (array_agg(descr ORDER BY descr))[1:5] AS samples
      FROM (
        SELECT sl.classoid::regclass::text AS obj_class,
               sl.classoid::regclass::text || ' #' || sl.objoid::text AS descr
        FROM pg_seclabel sl
        WHERE NOT (
          (sl.classoid = 'pg_class'::regclass AND EXISTS (
             SELECT 1 FROM pg_class c WHERE c.oid = sl.objoid AND (
               -- a column label resolves only on a column-bearing relkind; a
               -- view/matview column label is unresolved (no column fact)
               (sl.objsubid > 0 AND c.relkind IN (${g}))
               OR (sl.objsubid = 0 AND c.relkind IN (${c})))))
          -- a pg_type label resolves only for a MODELED type kind; a label on a
          -- base/shell/table-rowtype pg_type is unresolved (no type fact)
          OR (sl.classoid = 'pg_type'::regclass AND EXISTS (
             SELECT 1 FROM pg_type t WHERE t.oid = sl.objoid AND ${re("t")}))
          OR sl.classoid IN (${e})
        )
        UNION ALL
        SELECT sl.classoid::regclass::text,
               sl.classoid::regclass::text || ' #' || sl.objoid::text
        FROM pg_shseclabel sl
        WHERE sl.classoid <> 'pg_authid'::regclass
      ) u
      GROUP BY obj_class
      ORDER BY obj_class`)){let s=Number(n.count),p=String(n.obj_class),l=n.samples??[],d=s>l.length?", …":"";a.push({code:"unresolved_security_label",severity:"warning",message:`${s} security label${s===1?"":"s"} on unmodeled target${s===1?"":"s"} (${p}) cannot be managed by this engine (e.g. ${l.join(", ")}${d}) — the label is reported, not applied`,context:{objClass:p,count:s,samples:l}})}}async function se(o){let{q:i,pushWithMeta:r,pushMemberEdge:a,pushOwnerEdge:t}=o;for(let e of await i(`
    SELECT n.nspname AS schema, t.typname AS name, r.rolname AS owner,
           format_type(t.typbasetype, t.typtypmod) AS base_type,
           t.typnotnull AS not_null, t.typdefault AS default_expr,
           CASE WHEN t.typcollation <> bt.typcollation THEN (
             SELECT quote_ident(cn.nspname) || '.' || quote_ident(co.collname)
             FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
             WHERE co.oid = t.typcollation)
           END AS collation,
           obj_description(t.oid, 'pg_type') AS comment,
           ${A("t.typacl","T","t.typowner","pg_type","t.oid")} AS acl,
           ${f("pg_type","t.oid")} AS ext_member_of
    FROM pg_type t
    JOIN pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_roles r ON r.oid = t.typowner
    JOIN pg_type bt ON bt.oid = t.typbasetype
    WHERE t.typtype = 'd' AND ${m}
    ORDER BY n.nspname, t.typname`)){let c={kind:"domain",schema:String(e.schema),name:String(e.name)};r({id:c,parent:O(e.schema),payload:{baseType:String(e.base_type),notNull:!!e.not_null,default:e.default_expr==null?null:e.default_expr,collation:e.collation==null?null:e.collation}},e,u(e.acl)),a(c,e),t(c,e.owner)}for(let e of await i(`
    SELECT n.nspname AS schema, t.typname AS domain, con.conname AS name,
           pg_get_constraintdef(con.oid) AS def,
           con.contype AS type, con.convalidated AS validated,
           obj_description(con.oid, 'pg_constraint') AS comment
    FROM pg_constraint con
    JOIN pg_type t ON t.oid = con.contypid
    JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE con.contypid <> 0 AND ${m}
      AND ${E("pg_type","t.oid")}
    ORDER BY n.nspname, t.typname, con.conname`))r({id:{kind:"constraint",schema:String(e.schema),table:String(e.domain),name:String(e.name)},parent:{kind:"domain",schema:String(e.schema),name:String(e.domain)},payload:{def:String(e.def),type:String(e.type),validated:!!e.validated}},e)}async function ce(o){let{q:i,facts:r,pushWithMeta:a,pushMemberEdge:t,pushOwnerEdge:e,pgMajor:c}=o;for(let n of await i(`
    SELECT n.nspname AS schema, t.typname AS name, r.rolname AS owner,
           ARRAY(SELECT e.enumlabel::text FROM pg_enum e
                 WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) AS values,
           obj_description(t.oid, 'pg_type') AS comment,
           ${A("t.typacl","T","t.typowner","pg_type","t.oid")} AS acl,
           ${f("pg_type","t.oid")} AS ext_member_of
    FROM pg_type t
    JOIN pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_roles r ON r.oid = t.typowner
    WHERE t.typtype = 'e' AND ${m}
    ORDER BY n.nspname, t.typname`)){let s={kind:"type",schema:String(n.schema),name:String(n.name)};a({id:s,parent:O(n.schema),payload:{variant:"enum",values:n.values.map(String)}},n,u(n.acl)),t(s,n),e(s,n.owner)}for(let n of await i(`
    SELECT n.nspname AS schema, t.typname AS name, r.rolname AS owner,
           (SELECT json_agg(json_build_object(
              'name', a.attname,
              'position', a.attnum,
              'type', format_type(a.atttypid, a.atttypmod),
              'collation', CASE WHEN a.attcollation <> at.typcollation THEN (
                SELECT quote_ident(cn.nspname) || '.' || quote_ident(co.collname)
                FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
                WHERE co.oid = a.attcollation) END
            ) ORDER BY a.attnum)
            FROM pg_attribute a
            JOIN pg_type at ON at.oid = a.atttypid
            WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped) AS attrs,
           obj_description(t.oid, 'pg_type') AS comment,
           ${A("t.typacl","T","t.typowner","pg_type","t.oid")} AS acl,
           ${f("pg_type","t.oid")} AS ext_member_of
    FROM pg_type t
    JOIN pg_class tc ON tc.oid = t.typrelid AND tc.relkind = 'c'
    JOIN pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_roles r ON r.oid = t.typowner
    WHERE t.typtype = 'c' AND ${m}
    ORDER BY n.nspname, t.typname`)){let s={kind:"type",schema:String(n.schema),name:String(n.name)};a({id:s,parent:O(n.schema),payload:{variant:"composite"}},n,u(n.acl)),t(s,n),e(s,n.owner);let p=n.attrs??[];for(let l of p)r.push({id:{kind:"typeAttribute",schema:String(n.schema),type:String(n.name),name:l.name},parent:s,payload:{type:l.type,collation:l.collation??null,_position:l.position}})}let g=c>=14?`(SELECT quote_ident(mn.nspname) || '.' || quote_ident(mt.typname)
            FROM pg_type mt JOIN pg_namespace mn ON mn.oid = mt.typnamespace
            WHERE mt.oid = rng.rngmultitypid)`:"NULL::text";for(let n of await i(`
    SELECT n.nspname AS schema, t.typname AS name, r.rolname AS owner,
           format_type(rng.rngsubtype, NULL) AS subtype,
           -- pin SUBTYPE_OPCLASS only when it is not the subtype's default
           -- operator class (pg_dump's rule); the default is implied by SUBTYPE
           CASE WHEN NOT opc.opcdefault THEN
             quote_ident(opcn.nspname) || '.' || quote_ident(opc.opcname)
           END AS subtype_opclass,
           CASE WHEN rng.rngcollation <> 0 THEN (
             SELECT quote_ident(cn.nspname) || '.' || quote_ident(co.collname)
             FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
             WHERE co.oid = rng.rngcollation) END AS collation,
           CASE WHEN rng.rngsubdiff <> 0 THEN rng.rngsubdiff::regproc::text END AS subtype_diff,
           ${g} AS multirange_type_name,
           obj_description(t.oid, 'pg_type') AS comment,
           ${A("t.typacl","T","t.typowner","pg_type","t.oid")} AS acl,
           ${f("pg_type","t.oid")} AS ext_member_of
    FROM pg_range rng
    JOIN pg_type t ON t.oid = rng.rngtypid
    JOIN pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_roles r ON r.oid = t.typowner
    JOIN pg_opclass opc ON opc.oid = rng.rngsubopc
    JOIN pg_namespace opcn ON opcn.oid = opc.opcnamespace
    WHERE t.typtype = 'r' AND ${m}
    ORDER BY n.nspname, t.typname`)){let s={kind:"type",schema:String(n.schema),name:String(n.name)};a({id:s,parent:O(n.schema),payload:{variant:"range",subtype:String(n.subtype),subtypeOpclass:n.subtype_opclass==null?null:n.subtype_opclass,collation:n.collation==null?null:n.collation,subtypeDiff:n.subtype_diff==null?null:n.subtype_diff,multirangeTypeName:n.multirange_type_name==null?null:n.multirange_type_name}},n,u(n.acl)),t(s,n),e(s,n.owner)}}async function le(o){let{q:i,pushWithMeta:r,pushMemberEdge:a,pushOwnerEdge:t}=o;for(let e of await i(`
    SELECT n.nspname AS schema, c.collname AS name, r.rolname AS owner,
           c.collprovider AS provider, c.collisdeterministic AS deterministic,
           to_jsonb(c) AS raw,
           obj_description(c.oid, 'pg_collation') AS comment,
           ${f("pg_collation","c.oid")} AS ext_member_of
    FROM pg_collation c
    JOIN pg_namespace n ON n.oid = c.collnamespace
    JOIN pg_roles r ON r.oid = c.collowner
    WHERE ${m}
    ORDER BY n.nspname, c.collname`)){let c=e.raw,g=c.colllocale??c.colliculocale??null,n={kind:"collation",schema:String(e.schema),name:String(e.name)};r({id:n,parent:O(e.schema),payload:{provider:String(e.provider),deterministic:!!e.deterministic,locale:g,lcCollate:c.collcollate??null,lcCtype:c.collctype??null}},e),a(n,e),t(n,e.owner)}}function _e(o,i){return`EXISTS (SELECT 1 FROM pg_depend de
    WHERE de.classid = '${o}'::regclass
      AND de.objid = ${i} AND de.deptype = 'e')`}function Se(o,i){return`EXISTS (SELECT 1 FROM pg_depend idep
    WHERE idep.classid = '${o}'::regclass
      AND idep.objid = ${i} AND idep.deptype = 'i')`}var Ne=[{kind:"cast",classid:"pg_cast",oid:"c.oid",name:"format_type(c.castsource, NULL) || ' AS ' || format_type(c.casttarget, NULL)",from:"pg_cast c"},{kind:"operator",classid:"pg_operator",oid:"o.oid",name:"o.oprname",from:"pg_operator o"},{kind:"operator class",classid:"pg_opclass",oid:"opc.oid",name:"opc.opcname",from:"pg_opclass opc"},{kind:"operator family",classid:"pg_opfamily",oid:"opf.oid",name:"opf.opfname",from:"pg_opfamily opf"},{kind:"text search configuration",classid:"pg_ts_config",oid:"tc.oid",name:"tc.cfgname",from:"pg_ts_config tc"},{kind:"text search dictionary",classid:"pg_ts_dict",oid:"td.oid",name:"td.dictname",from:"pg_ts_dict td"},{kind:"text search parser",classid:"pg_ts_parser",oid:"tp.oid",name:"tp.prsname",from:"pg_ts_parser tp"},{kind:"text search template",classid:"pg_ts_template",oid:"tt.oid",name:"tt.tmplname",from:"pg_ts_template tt"},{kind:"statistics object",classid:"pg_statistic_ext",oid:"se.oid",name:"se.stxname",from:"pg_statistic_ext se"},{kind:"language",classid:"pg_language",oid:"l.oid",name:"l.lanname",from:"pg_language l",where:"l.lanispl"},{kind:"transform",classid:"pg_transform",oid:"tr.oid",name:"format_type(tr.trftype, NULL) || ' / ' || (SELECT ll.lanname FROM pg_language ll WHERE ll.oid = tr.trflang)",from:"pg_transform tr"},{kind:"parameter ACL",classid:"pg_parameter_acl",oid:"pa.oid",name:"pa.parname",from:"pg_parameter_acl pa",minVersion:15}];function fe(o){let i=[o.where,`${o.oid} >= 16384`,`NOT ${_e(o.classid,o.oid)}`,`NOT ${Se(o.classid,o.oid)}`].filter(Boolean);return`SELECT '${o.kind}'::text AS kind,
            count(*)::int AS count,
            (array_agg(nm ORDER BY nm))[1:5] AS samples
     FROM (
       SELECT ${o.name} AS nm
       FROM ${o.from}
       WHERE ${i.join(" AND ")}
     ) s`}async function pe(o,i){let a=Ne.filter(c=>c.minVersion===void 0||i>=c.minVersion).map(fe).join(`
UNION ALL
`),{rows:t}=await o.query(a),e=[];for(let c of t){if(c.count<=0)continue;let g=c.samples??[],n=c.count>g.length?", …":"";e.push({code:"unmodeled_kind",severity:"warning",message:`${c.count} unmodeled "${c.kind}" object${c.count===1?"":"s"} not managed by this engine (e.g. ${g.join(", ")}${n}) — v1 detects but does not model this kind`,context:{kind:c.kind,count:c.count,samples:g}})}return e}async function pn(o,i={}){let r=await o.connect();try{await r.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"),await r.query("SET LOCAL search_path TO 'pg_catalog'"),i.statementTimeoutMs!==void 0&&await r.query(`SET LOCAL statement_timeout = ${Math.max(0,Math.floor(i.statementTimeoutMs))}`);let a=await Ae(r,i.source??"liveDb",i.statementTimeoutMs,i.handlers??[],i.redactSecrets??!0);return await r.query("COMMIT"),a}catch(a){throw await r.query("ROLLBACK").catch(()=>{}),a}finally{r.release()}}async function Ae(o,i,r,a,t){let e=await M(o,r,t);await o.query(e.pgMajor>=15?"SELECT set_config('jit', 'off', true) WHERE has_parameter_privilege(current_user, 'jit', 'SET')":"SET LOCAL jit = off"),t||e.diagnostics.push({code:"secret-redaction-disabled",severity:"warning",message:"Secret redaction is DISABLED: foreign-data option values and subscription conninfo are emitted in cleartext in plan SQL, the catalog snapshot, declarative export, and the plan artifact. Do not persist these artifacts to untrusted locations."});let c=e.serverVersion;await Z(e),await te(e),await q(e),await P(e),await G(e),await V(e),await K(e),await X(e),await ee(e),await z(e),await $(e),await se(e),await ce(e),await le(e),await F(e),await Q(e),await ne(e),await J(e),await B(e),await Y(e),await oe(e),await j(e),await W(e);let g=k(e.facts);e.diagnostics.push(...g.diagnostics);let n=x(g.facts,e.edges,i);if(a.length>0){let s={query:e.q},p=[],l=[],d=[];for(let N of a){let _=await N.capture(s,n);p.push(..._.facts),l.push(..._.edges),_.diagnostics&&d.push(..._.diagnostics)}(p.length>0||l.length>0)&&(n=x([...n.facts(),...p],[...n.edges,...l],i)),n.diagnostics.push(...d)}return n.diagnostics.push(...e.factDiagnostics),e.diagnostics.push(...n.diagnostics),e.diagnostics.push(...await pe(o,e.pgMajor)),{factBase:n,pgVersion:c,diagnostics:e.diagnostics}}export{L as a,k as b,pn as c};
