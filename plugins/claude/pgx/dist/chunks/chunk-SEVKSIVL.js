import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{v as o,w as l}from"./chunk-IWVN2AVA.js";var s="n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname !~ '^pg_(toast_)?temp_'",c=(e,t)=>`NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = '${e}'::regclass AND e.objid = ${t} AND e.deptype = 'e')`,N="BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",u="SET LOCAL row_security = off";async function O(e){return(await e.query("SELECT pg_export_snapshot() AS s"))[0].s}var _=e=>`SET TRANSACTION SNAPSHOT ${l(e)}`;async function A(e){return(await e.query(`SELECT format('%I.%I', n.nspname, c.relname) AS qname,
            (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) FROM pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '') AS columns,
            NOT EXISTS (
              SELECT 1 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
                LEFT JOIN pg_type b ON b.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
                LEFT JOIN pg_type x ON x.oid = CASE WHEN b.typcategory = 'A' THEN b.typelem ELSE b.oid END
               WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
                 AND NOT (x.typtype IN ('b', 'e', 'r', 'm') AND x.typsend <> 0 AND x.typreceive <> 0
                          AND b.typsend <> 0 AND b.typreceive <> 0)) AS binary,
            pg_table_size(c.oid)::text AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'r' AND ${s} AND ${c("pg_class","c.oid")}
      ORDER BY pg_table_size(c.oid) DESC, 1`)).map(n=>({...n,columns:n.columns??"",bytes:Number(n.bytes)}))}function S(e){return`LOCK TABLE ${e.map(t=>t.qname).join(", ")} IN ACCESS SHARE MODE`}var E=e=>e.columns?` (${e.columns})`:"";function b(e,t){return`COPY ${e.qname}${E(e)} TO STDOUT${t?" (FORMAT binary)":""}`}function T(e,t){return`COPY ${e.qname}${E(e)} FROM STDIN (${t?"FORMAT binary, ":""}FREEZE)`}var R=e=>`TRUNCATE ONLY ${e.qname}`;async function I(e){return(await e.query(`SELECT format('%I.%I', n.nspname, c.relname) AS qname
       FROM pg_extension x CROSS JOIN LATERAL unnest(x.extconfig) AS cfg(oid)
       JOIN pg_class c ON c.oid = cfg.oid AND c.relkind = 'r' JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.reltuples > 0 OR pg_relation_size(c.oid) > 0 ORDER BY 1`)).map(n=>n.qname)}async function y(e){return e.query(`SELECT format('%I.%I', n.nspname, c.relname) AS qname,
            (SELECT format('%I.%I', tn.nspname, t.relname) FROM pg_depend d JOIN pg_class t ON t.oid = d.refobjid
               JOIN pg_namespace tn ON tn.oid = t.relnamespace
              WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.refclassid = 'pg_class'::regclass
                AND d.deptype IN ('a', 'i') AND d.refobjsubid > 0 LIMIT 1) AS owned_by,
            (SELECT a.attname FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
              WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.refclassid = 'pg_class'::regclass
                AND d.deptype IN ('a', 'i') AND d.refobjsubid > 0 LIMIT 1) AS owned_column
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'S' AND ${s} AND ${c("pg_class","c.oid")} ORDER BY 1`)}async function D(e,t){let n=[];for(let a=0;a<t.length;a+=200){let r=t.slice(a,a+200),i=await e.query(r.map((p,g)=>`SELECT ${g} AS i, last_value::text, is_called FROM ${p.qname}`).join(" UNION ALL "));for(let p of i)n.push({...r[p.i],last_value:p.last_value,is_called:p.is_called})}return n}async function f(e,t){t.length&&await e.query(`SELECT setval(coalesce(CASE WHEN x.owned_by IS NOT NULL THEN pg_get_serial_sequence(x.owned_by, x.owned_column) END, x.qname)::regclass,
                   x.last_value::bigint, x.is_called)
       FROM json_to_recordset($1::json) AS x(qname text, owned_by text, owned_column text, last_value text, is_called boolean)`,[JSON.stringify(t)])}async function L(e){return e.query(`SELECT l.oid::text AS oid, pg_get_userbyid(l.lomowner) AS owner,
            CASE WHEN l.lomacl IS NOT NULL THEN (SELECT coalesce(json_agg(json_build_object('grantee',
              CASE WHEN a.grantee = 0 THEN '' ELSE pg_get_userbyid(a.grantee) END, 'privilege', a.privilege_type,
              'grantable', a.is_grantable)), '[]') FROM aclexplode(l.lomacl) a) END AS acl,
            obj_description(l.oid, 'pg_largeobject') AS comment,
            (SELECT coalesce(sum(length(p.data)), 0) FROM pg_largeobject p WHERE p.loid = l.oid)::text AS bytes
       FROM pg_largeobject_metadata l ORDER BY l.oid`)}var m=4*1024*1024;async function x(e,t,n){return(await e.query("SELECT lo_get($1::oid, $2::bigint, $3) AS d",[t,n,m]))[0].d}async function w(e,t){await e.query("SELECT lo_create($1::oid)",[t])}async function C(e,t,n,a){await e.query("SELECT lo_put($1::oid, $2::bigint, $3)",[t,n,a])}function q(e,t,n){let a=[],r=`LARGE OBJECT ${Number(e.oid)}`;if(n&&e.owner!==t&&a.push(`ALTER ${r} OWNER TO ${o(e.owner)}`),n&&e.acl){a.push(`REVOKE ALL ON ${r} FROM PUBLIC, ${o(e.owner)}`);for(let i of e.acl)a.push(`GRANT ${i.privilege} ON ${r} TO ${i.grantee===""?"PUBLIC":o(i.grantee)}${i.grantable?" WITH GRANT OPTION":""}`)}return e.comment!==null&&a.push(`COMMENT ON ${r} IS ${l(e.comment)}`),a}async function $(e){return e.query(`SELECT n.nspname AS schema, c.relname AS name, c.relispopulated AS populated
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'm' AND ${s} AND ${c("pg_class","c.oid")}`)}var M=(e,t)=>`REFRESH MATERIALIZED VIEW ${o(e.schema)}.${o(e.name)}${t?"":" WITH NO DATA"}`;async function H(e){return(await e.query(`SELECT format('ALTER %s %I.%I ALTER COLUMN %I SET STATISTICS %s',
                   CASE c.relkind WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
                   n.nspname, c.relname, a.attname, a.attstattarget) AS s
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'm', 'f') AND a.attnum > 0 AND NOT a.attisdropped AND a.attstattarget >= 0
        AND ${s} AND ${c("pg_class","c.oid")} ORDER BY 1`)).map(n=>n.s)}async function h(e){return e.query(`SELECT pg_get_statisticsobjdef(s.oid) AS def, format('%I.%I', n.nspname, s.stxname) AS qname,
            pg_get_userbyid(s.stxowner) AS owner, obj_description(s.oid, 'pg_statistic_ext') AS comment
       FROM pg_statistic_ext s JOIN pg_namespace n ON n.oid = s.stxnamespace
      WHERE ${s} AND ${c("pg_statistic_ext","s.oid")} ORDER BY 2`)}async function F(e,t){let n=await e.query("SELECT rolname AS r FROM pg_roles WHERE rolname = ANY($1)",[t]);return new Set(n.map(a=>a.r))}async function W(e,t){let n=e.serverVersionNum>=16e4?"SET":"MEMBER";return(await e.query(`SELECT r FROM unnest($1::text[]) AS r
      WHERE NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
        AND NOT pg_has_role(current_user, (SELECT oid FROM pg_roles WHERE rolname = r), '${n}')`,[t])).map(r=>r.r)}async function j(e){let t=await e.query(`SELECT format('%I.%I', n.nspname, c.relname) AS qname, string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) AS cols
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'f') AND a.attnum > 0 AND NOT a.attisdropped AND ${s}
        AND ${c("pg_class","c.oid")} GROUP BY 1`);return new Map(t.map(n=>[n.qname,n.cols]))}async function P(e){let[t]=await e.query(`SELECT pg_database_size(current_database())::text AS bytes,
            (SELECT count(*)::int FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND ${s}) AS relations`);return{bytes:Number(t.bytes),relations:t.relations}}async function J(e){return e.query(`WITH RECURSIVE tree AS (
       SELECT i.inhrelid AS child, i.inhparent AS parent, 1 AS depth FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relkind = 'I' AND NOT EXISTS (SELECT 1 FROM pg_inherits up WHERE up.inhrelid = i.inhparent)
       UNION ALL
       SELECT i.inhrelid, i.inhparent, t.depth + 1 FROM pg_inherits i JOIN tree t ON i.inhparent = t.child)
     SELECT format('%I.%I', n.nspname, c.relname) AS qname, pg_get_indexdef(t.child) AS def,
            format('%I.%I', pn.nspname, p.relname) AS parent
       FROM tree t JOIN pg_class c ON c.oid = t.child JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_class p ON p.oid = t.parent JOIN pg_namespace pn ON pn.oid = p.relnamespace
      ORDER BY t.depth, 1`)}async function B(e,t){let n=await e.query(`SELECT format('%I.%I', n.nspname, c.relname) AS q FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('i', 'I') AND format('%I.%I', n.nspname, c.relname) = ANY($1)`,[t]);return new Set(n.map(a=>a.q))}var v=(e,t)=>`ALTER INDEX ${e} ATTACH PARTITION ${t}`;export{N as a,u as b,O as c,_ as d,A as e,S as f,b as g,T as h,R as i,I as j,y as k,D as l,f as m,L as n,m as o,x as p,w as q,C as r,q as s,$ as t,M as u,H as v,h as w,F as x,W as y,j as z,P as A,J as B,B as C,v as D};
