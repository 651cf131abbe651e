import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{h as B}from"./chunk-WV2U26FC.js";import{A as C,R as $,T as U,U as P,d as w,l as p,la as F,n as b,t as x}from"./chunk-VCNXHISA.js";import{createHash as X}from"node:crypto";var u={schema:1,identity:2,template:3,pool:4,lease:5,source:6,freeze:7,frozen:8};function m(e,t){return(BigInt(e)<<56n|BigInt("0x"+t.slice(0,14).padEnd(14,"0"))).toString()}var N=e=>X("sha256").update(e).digest("hex"),o={schema:m(u.schema,"0"),identity:e=>m(u.identity,e),template:e=>m(u.template,N(e)),pool:e=>m(u.pool,N(e)),lease:e=>m(u.lease,e),source:e=>m(u.source,N(e)),freeze:e=>m(u.freeze,N(e)),frozen:e=>m(u.frozen,N(e))};async function h(e,t,r){await e.query("SELECT pg_advisory_lock($1::bigint)",[t]);try{return await r()}finally{await D(e,t)}}async function L(e,t,r){let[n]=await e.query("SELECT pg_try_advisory_lock($1::bigint) AS ok",[t]);if(n.ok)try{return await r()}finally{await D(e,t)}}async function D(e,t){await e.query("SELECT pg_advisory_unlock($1::bigint)",[t]).catch(()=>{})}function ae(e,t,r){return h(e,o.identity(t),r)}function oe(e,t,r){return L(e,o.identity(t),r)}function ce(e,t,r){return h(e,o.template(t),r)}async function de(e,t,r,n){let i=Date.now()+r;for(;;){let[s]=await e.query("SELECT pg_try_advisory_lock($1::bigint) AS ok",[o.template(t)]);if(s.ok)break;if(Date.now()>=i)return;await new Promise(a=>setTimeout(a,50))}try{return await n()}finally{await D(e,o.template(t))}}function le(e,t,r){return h(e,o.source(t),r)}function ge(e,t,r){return L(e,o.pool(t),r)}async function pe(e,t){let r=BigInt(o.pool(t)),[n]=await e.query(`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
                     AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                     AND classid = $1::oid AND objid = $2::oid AND objsubid = 1) AS held`,[(r>>32n&0xffffffffn).toString(),(r&0xffffffffn).toString()]);return n.held}async function ue(e,t){await e.query("SELECT pg_advisory_lock_shared($1::bigint)",[o.lease(t)])}async function me(e,t){await e.query("SELECT pg_advisory_unlock_shared($1::bigint)",[o.lease(t)])}async function fe(e,t){return await L(e,o.lease(t),async()=>!0)===!0}async function ye(e,t,r,n){let i=o.freeze(t);if(r===void 0)return h(e,i,n);await e.query(`SET lock_timeout = ${Math.max(1,Math.floor(r))}`);try{await e.query("SELECT pg_advisory_lock($1::bigint)",[i])}catch(s){if(b(s)===p.LOCK_NOT_AVAILABLE)return;throw s}finally{await e.query("RESET lock_timeout").catch(()=>{})}try{return await n()}finally{await D(e,i)}}function be(e,t,r){return L(e,o.freeze(t),r)}async function Ee(e,t){await e.query("SELECT pg_advisory_lock_shared($1::bigint)",[o.frozen(t)])}async function he(e,t){await e.query("SELECT pg_advisory_unlock_shared($1::bigint)",[o.frozen(t)]).catch(()=>{})}function Te(e,t,r){return L(e,o.frozen(t),r)}var T="pgx_registry",W=`
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
-- The nonce of the branch's creation (catalog.isOwnBranch); exec leases (engine/exec-lease.ts) retire a branch with
-- retire_after_exec when the last of them ends. Added in place to registries made before them.
ALTER TABLE pgx_branch ADD COLUMN IF NOT EXISTS nonce text;
ALTER TABLE pgx_branch ADD COLUMN IF NOT EXISTS retire_after_exec boolean NOT NULL DEFAULT false;
-- Registries made before branch roles: the columns are added on first use (records.ts retries on 42703).
ALTER TABLE pgx_branch ADD COLUMN IF NOT EXISTS role text, ADD COLUMN IF NOT EXISTS role_password text;
-- Lineage (engine/fork.ts): the database a branch was forked from (NULL: the template) and when. The baseline the
-- fork's "unchanged" check compares against: the branch's statistics mark and the template build at activation.
-- swap_nonce: a reset's or adopt's replacement in flight (engine/reset.ts), recorded before it is created.
-- changes: the summary of what a subagent's branch changed, recorded at its SubagentStop (engine/handoff.ts).
-- Added in place to older registries (records.ts retries on 42703).
ALTER TABLE pgx_branch ADD COLUMN IF NOT EXISTS parent text, ADD COLUMN IF NOT EXISTS forked_at timestamptz,
  ADD COLUMN IF NOT EXISTS base_mark text, ADD COLUMN IF NOT EXISTS base_template oid, ADD COLUMN IF NOT EXISTS swap_nonce text,
  ADD COLUMN IF NOT EXISTS changes jsonb;
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
-- Imported sources (pgx source import/sync): where each copy came from, never its password. Added in place to
-- registries made before imports were remembered (records.ts retries on 42P01).
CREATE TABLE IF NOT EXISTS pgx_source (
  database          text PRIMARY KEY,
  project           text NOT NULL,
  nonce             text NOT NULL,
  origin_kind       text NOT NULL CHECK (origin_kind IN ('url','env','file')),
  origin            text NOT NULL,
  origin_env        text,
  origin_env_file   text,
  format            text NOT NULL,
  origin_fingerprint text,
  imported_at       timestamptz NOT NULL DEFAULT now()
);
-- A copy's pgx-only name is recorded BEFORE its database is created (as a template build's is), and an old copy set
-- aside by a sync is recorded in the same transaction as the swap: so every copy pgx made is provably its own.
CREATE TABLE IF NOT EXISTS pgx_source_copy (
  name        text PRIMARY KEY,
  database    text NOT NULL,
  project     text NOT NULL,
  nonce       text NOT NULL,
  state       text NOT NULL CHECK (state IN ('new','old')),
  started_at  timestamptz NOT NULL DEFAULT now()
);
-- Frozen copies of a branch (engine/freeze.ts): one copy per state of a session's branch, shared by the subagents that
-- fork from it. Recorded BEFORE its database is created (pgx_frz_<nonce>), as a branch's creation is. ticket: the
-- sequence value drawn before its copy began (a subagent whose own ticket is lower arrived before it, so it holds
-- everything that subagent's parent had committed); signature: the parent's activity read after the copy, when it
-- proves nothing ran on the parent while the copy was made (NULL: not reusable by later arrivals).
CREATE SEQUENCE IF NOT EXISTS pgx_frozen_ticket;
CREATE TABLE IF NOT EXISTS pgx_frozen (
  name        text PRIMARY KEY,
  project     text NOT NULL,
  parent      text NOT NULL,
  nonce       text NOT NULL,
  state       text NOT NULL CHECK (state IN ('making','ready')),
  ticket      bigint NOT NULL,
  signature   text,
  method      text,
  bytes       bigint,
  started_at  timestamptz NOT NULL DEFAULT now(),
  ready_at    timestamptz
);
CREATE INDEX IF NOT EXISTS pgx_frozen_parent ON pgx_frozen (parent, state);
-- Each project's masking salt (src/mask/salt.ts): on the server with its copies, never in git; made on first use.
CREATE TABLE IF NOT EXISTS pgx_mask_salt (
  project     text PRIMARY KEY,
  salt        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS pgx_pool_demand (
  template    text PRIMARY KEY,
  peak        int NOT NULL,
  peak_at     timestamptz NOT NULL DEFAULT now()
);
`;async function Re(e,t={}){try{return await x({...e,database:T},t)}catch(i){if(b(i)!==p.INVALID_CATALOG_NAME)throw i}let r=await x(e,t);try{await $(r,T)&&(await C(r,T,{kind:"registry"}),await F(r,T))}finally{await r.close()}let n=await x({...e,database:T},t);return await I(n),n}async function I(e){await h(e,o.schema,()=>e.query(W))}async function De(e){try{return await x({...e,database:T})}catch(t){if(b(t)===p.INVALID_CATALOG_NAME)return null;throw t}}async function Se(e,t){await e.query("BEGIN");try{let r=await t();return await e.query("COMMIT"),r}catch(r){throw await e.query("ROLLBACK").catch(()=>{}),r}}async function d(e,t,r=[]){try{return await e.query(t,r)}catch(n){let i=b(n);if(i!==p.UNDEFINED_TABLE&&i!==p.UNDEFINED_COLUMN)throw n;return await I(e),e.query(t,r)}}var S="SELECT b.*, (d.oid IS NOT NULL) AS db_exists FROM pgx_branch b LEFT JOIN pg_database d ON d.datname = b.name";async function ve(e,t){let[r]=await d(e,`${S} WHERE b.identity_key = $1`,[t]);return r}async function K(e,t){let[r]=await d(e,`${S} WHERE b.name = $1`,[t]);return r}async function Ce(e,t){let r=[],n=[],i=(a,c)=>{n.push(c),r.push(a.replace("?",`$${n.length}`))};t.project!==void 0&&i("b.project = ?",t.project),t.agentId!==void 0&&i("b.agent_id = ?",t.agentId),t.execId!==void 0&&i("b.exec_id = ?",t.execId),t.name!==void 0&&i("b.name = ?",t.name),t.sessionId!==void 0&&(i("b.session_id = ?",t.sessionId),t.includeSubagents||r.push("b.kind = 'session'"));let s=`${S}${r.length?` WHERE ${r.join(" AND ")}`:""} ORDER BY b.created_at, b.name`;return d(e,s,n)}async function $e(e,t){return(await d(e,`INSERT INTO pgx_branch (name, identity_key, kind, project, host, session_id, agent_id, exec_id, source, template, state,
                             deadline, deadline_kind, idle_ttl_ms, grace_ms, nonce, role, role_password, parent, forked_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,'creating', now() + interval '10 minutes','creating',$11,$12,$13,$14,$15,$16,
             CASE WHEN $16::text IS NULL THEN NULL ELSE now() END)
     ON CONFLICT DO NOTHING RETURNING name`,[t.name,t.identity_key,t.kind,t.project,t.host,t.session_id??null,t.agent_id??null,t.exec_id??null,t.source??null,t.template,t.idle_ttl_ms,t.grace_ms,t.nonce,t.role??null,t.role_password??null,t.parent??null])).length===1}async function Ue(e,t,r){let[n]=await d(e,"UPDATE pgx_branch SET nonce = $2 WHERE name = $1 RETURNING *",[t,r]);if(!n)throw new w("BRANCH_FAILED",`The registry record of "${t}" disappeared while the branch was being made.`,"Retry.");return n}async function Pe(e,t,r){await d(e,"UPDATE pgx_branch SET retire_after_exec = $2 WHERE name = $1",[t,r])}function q(e,t){return e.serverVersionNum<14e4?"NULL::text":`(SELECT concat_ws('@', s.sessions, extract(epoch FROM s.stats_reset), extract(epoch FROM (SELECT a.stats_reset FROM pg_stat_archiver a))) FROM pg_stat_database s WHERE s.datid = ${t}.oid)`}async function Fe(e,t,r,n,i){let s=i?`, base_mark = (SELECT ${q(e,"d")} FROM pg_database d WHERE d.datname = $1), base_template = $4::oid`:"",[a]=await d(e,`UPDATE pgx_branch SET state = 'active', method = $2, last_seen_at = now(),
            idle_ttl_ms = COALESCE($3, idle_ttl_ms),
            deadline = now() + COALESCE($3, idle_ttl_ms) * interval '1 millisecond', deadline_kind = 'idle'${s}
      WHERE name = $1 RETURNING *`,i?[t,r,n??null,i.template]:[t,r,n??null]);if(!a)throw new w("BRANCH_FAILED",`The registry record of "${t}" disappeared while the branch was being made ready.`,"Retry; if it persists, `pgx agent doctor` lists orphans.");return a}async function Be(e,t){return(await d(e,`UPDATE pgx_branch SET last_seen_at = now(), deadline = now() + idle_ttl_ms * interval '1 millisecond'
      WHERE name = $1 AND state = 'active' RETURNING name`,[t])).length===1}async function Me(e,t){let[r]=await d(e,`UPDATE pgx_branch SET state = 'retiring', deadline = now() + grace_ms * interval '1 millisecond', deadline_kind = 'grace'
      WHERE name = $1 RETURNING *`,[t]);return r}async function ze(e,t,r,n){return await d(e,"UPDATE pgx_branch SET role = $2, role_password = $3 WHERE name = $1",[t,r,n]),await K(e,t)}async function He(e,t,r,n){return(await d(e,`UPDATE pgx_branch SET changes = $2::jsonb,
            deadline = CASE WHEN $3::bigint IS NULL THEN deadline ELSE greatest(deadline, now() + $3::bigint * interval '1 millisecond') END
      WHERE name = $1 AND state = 'retiring' RETURNING name`,[t,JSON.stringify(r),n])).length===1}async function je(e,t){let[r]=await d(e,"SELECT deadline < now() AS expired FROM pgx_branch WHERE name = $1",[t]);return!!r?.expired}async function Xe(e,t){await d(e,"DELETE FROM pgx_branch WHERE name = $1",[t])}async function We(e,t){return d(e,`${S} WHERE b.deadline < now() ORDER BY b.deadline LIMIT $1`,[t])}async function Ke(e){let[t]=await d(e,"SELECT now() AS now");return new Date(t.now).getTime()}async function qe(e,t,r){let[n]=await e.query(`UPDATE pgx_branch b SET last_seen_at = now(), deadline = now() + b.idle_ttl_ms * interval '1 millisecond'
       FROM pg_database d
      WHERE b.identity_key = $1 AND b.state = 'active' AND d.datname = b.name AND d.datallowconn
        AND shobj_description(d.oid, 'pg_database') = $2 || COALESCE(':' || b.nonce, '')
     RETURNING b.*, true AS db_exists`,[t,r]);return n}import{readFileSync as Y,statSync as M,statfsSync as G}from"node:fs";import{isAbsolute as V,join as v}from"node:path";var Q=16*1024*1024,k=new Map;function z(e){let t=`${e.config.serverUrl?"url":"local"}:${e.admin.user}@${e.admin.host}:${e.admin.port}`,r=k.get(t);return r||(r=J(e).catch(n=>(k.delete(t),{dataDir:null,why:`the server's data directory could not be read (${n.message})`})),k.set(t,r)),r}async function J(e){let t=await P(e.registry),r=t.sharedBuffers;if(!e.config.serverUrl){let a=B(e.config.home);if(a?.data_dir&&a.port===e.admin.port)return{dataDir:a.data_dir,proof:"local server",owed:r}}if(!t.dataDirectory)return{dataDir:null,why:`the role "${e.admin.user}" may not read the server's data_directory (it needs superuser or pg_read_all_settings)`};let n=t.dataDirectory,i;try{i=Y(v(n,"postmaster.pid"),"utf8").split(`
`)}catch(a){let c=a.code;return(c==="EACCES"||c==="EPERM")&&Z(e.admin.host)&&ee(n)?{dataDir:n,proof:"path",owed:r}:{dataDir:null,why:`its data directory ${n} is not on this machine (a remote server)`}}return i[1]===n&&Number(i[3])===t.port&&Math.abs(Number(i[2])-t.startedAt)<=2?{dataDir:n,proof:"postmaster.pid",owed:r}:{dataDir:null,why:`${n} on this machine belongs to another server than the one connected to`}}function Z(e){return e.startsWith("/")||e==="localhost"||e==="::1"||e==="[::1]"||/^127\./.test(e)}function ee(e){try{return M(e),!0}catch{return!1}}function O(e){try{let t=G(e);return{path:e,dev:M(e).dev,free:t.bavail*t.bsize,size:t.blocks*t.bsize}}catch{return}}function H(e,t){return Math.min(e.bytes??1/0,e.percent!==void 0?Math.ceil(t*e.percent/100):1/0)}function te(e,t){return e==="cow"?{files:Math.min(t,Q),wal:0}:e==="file-copy"?{files:t,wal:0}:{files:t,wal:t}}var R=new Map;function re(e,t,r,n,i=!1){let s=new Map;for(let a of e){let c=s.get(a.fs.dev);s.set(a.fs.dev,{fs:c?.fs??a.fs,bytes:(c?.bytes??0)+a.bytes})}for(let{fs:a,bytes:c}of s.values()){let y=H(t,a.size),_=i?2*y:y,E=r(a.dev);if(a.free-n-E-c<_)return{fs:a,needed:c,inFlight:E,owed:n,reserve:y,floor:_}}}var A=class extends w{constructor(r,n,i){let s=r,a=s.floor>s.reserve?`, and the warm pool leaves twice that (${f(s.floor)})`:"",c=[s.owed?`up to ${f(s.owed)} the server may still write from its buffers`:"",s.in_flight?`${f(s.in_flight)} promised to copies already running`:""].filter(Boolean),y=c.length?` (less ${c.join(" and ")})`:"";super("DISK_RESERVE",`Not enough disk for ${s.what}: it needs ~${f(s.needed)} on the file system of ${s.path}, which has ${f(s.free)} free of ${f(s.size)}${y}; pgx keeps ${f(s.reserve)} free there (${n})${a}.`,`Free space on that file system (\`pgx agent gc\` drops expired branches and unused templates; \`pgx agent pool drain\` drops the warm pool's members; \`pgx agent ls --all\` shows what pgx holds), or lower [disk] reserve in ${i}; then retry.`,{data:{disk:r}});this.figures=r}figures};function et(e){return e instanceof A}function f(e){let t=Math.abs(e);return t>=1024**3?`${(e/1024**3).toFixed(1)} GB`:t>=1024**2?`${Math.round(e/1024**2)} MB`:`${Math.round(e/1024)} kB`}function j(e){let t=e.bytes!==void 0?f(e.bytes).replace(/ /g,"").replace(/\.0(?=[GMk]B)/,""):void 0;return t!==void 0&&e.percent!==void 0?`[disk] reserve unset: ${t}, or ${e.percent}% of a smaller file system`:`[disk] reserve = "${t??`${e.percent}%`}"`}async function tt(e,t,r,n={}){let i=await ne(e,t,n.speculative??!1);try{return await r()}finally{for(let[s,a]of i)R.set(s,(R.get(s)??0)-a)}}async function ne(e,t,r){let n=new Map,i=await z(e);if(!i.dataDir)return n;let s=await U(e.registry,t.from);if(!s)return n;let a=t.way==="dump-restore"||s.location===""?i.dataDir:V(s.location)?s.location:v(i.dataDir,s.location),c=O(a);if(!c)return n;let{files:y,wal:_}=te(t.way,s.bytes),E=[{fs:c,bytes:y}];if(_){let l=O(v(i.dataDir,"pg_wal"))??O(i.dataDir);l&&E.push({fs:l,bytes:_})}let g=re(E,e.config.disk.reserve,l=>R.get(l)??0,i.owed,r);if(g){let l={what:t.what,path:g.fs.path,free:g.fs.free,needed:g.needed,in_flight:g.inFlight,owed:g.owed,reserve:g.reserve,floor:g.floor,size:g.fs.size};throw new A(l,j(e.config.disk.reserve),e.config.file??".pgx.toml")}for(let l of E)n.set(l.fs.dev,(n.get(l.fs.dev)??0)+l.bytes),R.set(l.fs.dev,(R.get(l.fs.dev)??0)+l.bytes);return n}async function rt(e){let t=await z(e);if(t.dataDir===null)return{visible:!1,why:t.why};let r=O(t.dataDir);return r?{visible:!0,proof:t.proof,fs:r,owed:t.owed,reserve:H(e.config.disk.reserve,r.size),reserve_setting:j(e.config.disk.reserve)}:{visible:!1,why:`statfs of its data directory ${t.dataDir} failed`}}export{o as a,h as b,ae as c,oe as d,ce as e,de as f,le as g,ge as h,pe as i,ue as j,me as k,fe as l,ye as m,be as n,Ee as o,he as p,Te as q,T as r,Re as s,I as t,De as u,Se as v,d as w,ve as x,K as y,Ce as z,$e as A,Ue as B,Pe as C,q as D,Fe as E,Be as F,Me as G,ze as H,He as I,je as J,Xe as K,We as L,Ke as M,qe as N,et as O,f as P,tt as Q,rt as R};
