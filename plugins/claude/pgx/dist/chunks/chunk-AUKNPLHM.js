import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{h as M}from"./chunk-3FROZ4LZ.js";import{A as U,R as $,T as P,U as F,d as N,l as p,n as E,oa as B,t as x}from"./chunk-IWVN2AVA.js";import{createHash as W}from"node:crypto";var m={schema:1,identity:2,template:3,pool:4,lease:5,source:6,freeze:7,frozen:8};function u(e,t){return(BigInt(e)<<56n|BigInt("0x"+t.slice(0,14).padEnd(14,"0"))).toString()}var w=e=>W("sha256").update(e).digest("hex"),c={schema:u(m.schema,"0"),identity:e=>u(m.identity,e),template:e=>u(m.template,w(e)),pool:e=>u(m.pool,w(e)),lease:e=>u(m.lease,e),source:e=>u(m.source,w(e)),freeze:e=>u(m.freeze,w(e)),frozen:e=>u(m.frozen,w(e))};async function y(e,t,r){await e.query("SELECT pg_advisory_lock($1::bigint)",[t]);try{return await r()}finally{await D(e,t)}}async function L(e,t,r){let[n]=await e.query("SELECT pg_try_advisory_lock($1::bigint) AS ok",[t]);if(n.ok)try{return await r()}finally{await D(e,t)}}async function D(e,t){await e.query("SELECT pg_advisory_unlock($1::bigint)",[t]).catch(()=>{})}function oe(e,t,r){return y(e,c.identity(t),r)}function ce(e,t,r){return L(e,c.identity(t),r)}function de(e,t,r){return y(e,c.template(t),r)}async function le(e,t,r,n){let i=Date.now()+r;for(;;){let[s]=await e.query("SELECT pg_try_advisory_lock($1::bigint) AS ok",[c.template(t)]);if(s.ok)break;if(Date.now()>=i)return;await new Promise(a=>setTimeout(a,50))}try{return await n()}finally{await D(e,c.template(t))}}function ge(e,t,r){return y(e,c.source(t),r)}function pe(e,t,r){return L(e,c.pool(t),r)}async function me(e,t){let r=BigInt(c.pool(t)),[n]=await e.query(`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
                     AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                     AND classid = $1::oid AND objid = $2::oid AND objsubid = 1) AS held`,[(r>>32n&0xffffffffn).toString(),(r&0xffffffffn).toString()]);return n.held}async function ue(e,t){await e.query("SELECT pg_advisory_lock_shared($1::bigint)",[c.lease(t)])}async function fe(e,t){await e.query("SELECT pg_advisory_unlock_shared($1::bigint)",[c.lease(t)])}async function be(e,t){return await L(e,c.lease(t),async()=>!0)===!0}async function Ee(e,t,r,n){let i=c.freeze(t);if(r===void 0)return y(e,i,n);await e.query(`SET lock_timeout = ${Math.max(1,Math.floor(r))}`);try{await e.query("SELECT pg_advisory_lock($1::bigint)",[i])}catch(s){if(E(s)===p.LOCK_NOT_AVAILABLE)return;throw s}finally{await e.query("RESET lock_timeout").catch(()=>{})}try{return await n()}finally{await D(e,i)}}function ye(e,t,r){return L(e,c.freeze(t),r)}async function Te(e,t){await e.query("SELECT pg_advisory_lock_shared($1::bigint)",[c.frozen(t)])}async function he(e,t){await e.query("SELECT pg_advisory_unlock_shared($1::bigint)",[c.frozen(t)]).catch(()=>{})}function _e(e,t,r){return L(e,c.frozen(t),r)}function Ne(e,t,r){return y(e,c.frozen(t),r)}var h="pgx_registry",K=`
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
-- The fork point a merge reads (engine/fork-point.ts): the frozen copy a fork cloned (NULL: base_template, the template
-- build, when it is one); merged_into / merged_at: pgx agent merge applied its changes there (the fork point is let go
-- once the branch is merged and no longer active). Added in place to older registries (records.ts retries on 42703).
ALTER TABLE pgx_branch ADD COLUMN IF NOT EXISTS fork_point text, ADD COLUMN IF NOT EXISTS merged_into text,
  ADD COLUMN IF NOT EXISTS merged_at timestamptz;
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
-- Subagents that did not get their session's state (engine/fork-miss.ts, decision 485): one row per subagent, written
-- when its fork of the session's branch could not be made in time; the parent hears it (the handoff inbox names the
-- branch and the time), the doctor lists it. resolved_at: a later try made the fork after all.
CREATE TABLE IF NOT EXISTS pgx_fork_miss (
  identity_key text PRIMARY KEY,
  project      text NOT NULL,
  session_id   text,
  agent_id     text,
  branch       text NOT NULL,
  parent       text NOT NULL,
  reason       text NOT NULL CHECK (reason IN ('client-tools','copy-failed','timeout')),
  cause        text,
  backends     int,
  waited_ms    int,
  fallback     text NOT NULL CHECK (fallback IN ('wait','template')),
  at           text NOT NULL,
  last_at      timestamptz NOT NULL DEFAULT now(),
  misses       int NOT NULL DEFAULT 1,
  resolved_at  timestamptz
);
CREATE INDEX IF NOT EXISTS pgx_fork_miss_project ON pgx_fork_miss (project, last_at);
CREATE TABLE IF NOT EXISTS pgx_pool_demand (
  template    text PRIMARY KEY,
  peak        int NOT NULL,
  peak_at     timestamptz NOT NULL DEFAULT now()
);
`;async function Se(e,t={}){try{return await x({...e,database:h},t)}catch(i){if(E(i)!==p.INVALID_CATALOG_NAME)throw i}let r=await x(e,t);try{await $(r,h)&&(await U(r,h,{kind:"registry"}),await B(r,h))}finally{await r.close()}let n=await x({...e,database:h},t);return await k(n),n}async function k(e){await y(e,c.schema,()=>e.query(K))}async function Oe(e){try{return await x({...e,database:h})}catch(t){if(E(t)===p.INVALID_CATALOG_NAME)return null;throw t}}async function Ae(e,t){await e.query("BEGIN");try{let r=await t();return await e.query("COMMIT"),r}catch(r){throw await e.query("ROLLBACK").catch(()=>{}),r}}async function o(e,t,r=[]){try{return await e.query(t,r)}catch(n){let i=E(n);if(i!==p.UNDEFINED_TABLE&&i!==p.UNDEFINED_COLUMN)throw n;return await k(e),e.query(t,r)}}var S="SELECT b.*, (d.oid IS NOT NULL) AS db_exists FROM pgx_branch b LEFT JOIN pg_database d ON d.datname = b.name";async function Ue(e,t){let[r]=await o(e,`${S} WHERE b.identity_key = $1`,[t]);return r}async function q(e,t){let[r]=await o(e,`${S} WHERE b.name = $1`,[t]);return r}async function $e(e,t){let r=[],n=[],i=(a,d)=>{n.push(d),r.push(a.replace("?",`$${n.length}`))};t.project!==void 0&&i("b.project = ?",t.project),t.agentId!==void 0&&i("b.agent_id = ?",t.agentId),t.execId!==void 0&&i("b.exec_id = ?",t.execId),t.name!==void 0&&i("b.name = ?",t.name),t.sessionId!==void 0&&(i("b.session_id = ?",t.sessionId),t.includeSubagents||r.push("b.kind = 'session'"));let s=`${S}${r.length?` WHERE ${r.join(" AND ")}`:""} ORDER BY b.created_at, b.name`;return o(e,s,n)}async function Pe(e,t){return(await o(e,`INSERT INTO pgx_branch (name, identity_key, kind, project, host, session_id, agent_id, exec_id, source, template, state,
                             deadline, deadline_kind, idle_ttl_ms, grace_ms, nonce, role, role_password, parent, forked_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,'creating', now() + interval '10 minutes','creating',$11,$12,$13,$14,$15,$16,
             CASE WHEN $16::text IS NULL THEN NULL ELSE now() END)
     ON CONFLICT DO NOTHING RETURNING name`,[t.name,t.identity_key,t.kind,t.project,t.host,t.session_id??null,t.agent_id??null,t.exec_id??null,t.source??null,t.template,t.idle_ttl_ms,t.grace_ms,t.nonce,t.role??null,t.role_password??null,t.parent??null])).length===1}async function Fe(e,t,r){let[n]=await o(e,"UPDATE pgx_branch SET nonce = $2 WHERE name = $1 RETURNING *",[t,r]);if(!n)throw new N("BRANCH_FAILED",`The registry record of "${t}" disappeared while the branch was being made.`,"Retry.");return n}async function Be(e,t,r){await o(e,"UPDATE pgx_branch SET retire_after_exec = $2 WHERE name = $1",[t,r])}function Y(e,t){return e.serverVersionNum<14e4?"NULL::text":`(SELECT concat_ws('@', s.sessions, extract(epoch FROM s.stats_reset), extract(epoch FROM (SELECT a.stats_reset FROM pg_stat_archiver a))) FROM pg_stat_database s WHERE s.datid = ${t}.oid)`}async function Me(e,t,r,n,i){let s=i?`, base_mark = (SELECT ${Y(e,"d")} FROM pg_database d WHERE d.datname = $1), base_template = $4::oid`:"",[a]=await o(e,`UPDATE pgx_branch SET state = 'active', method = $2, last_seen_at = now(),
            idle_ttl_ms = COALESCE($3, idle_ttl_ms),
            deadline = now() + COALESCE($3, idle_ttl_ms) * interval '1 millisecond', deadline_kind = 'idle'${s}
      WHERE name = $1 RETURNING *`,i?[t,r,n??null,i.template]:[t,r,n??null]);if(!a)throw new N("BRANCH_FAILED",`The registry record of "${t}" disappeared while the branch was being made ready.`,"Retry; if it persists, `pgx agent doctor` lists orphans.");return a}async function ze(e,t){return(await o(e,`UPDATE pgx_branch SET last_seen_at = now(), deadline = now() + idle_ttl_ms * interval '1 millisecond'
      WHERE name = $1 AND state = 'active' RETURNING name`,[t])).length===1}async function He(e,t){let[r]=await o(e,`UPDATE pgx_branch SET state = 'retiring', deadline = now() + grace_ms * interval '1 millisecond', deadline_kind = 'grace'
      WHERE name = $1 RETURNING *`,[t]);return r}async function je(e,t,r,n){return await o(e,"UPDATE pgx_branch SET role = $2, role_password = $3 WHERE name = $1",[t,r,n]),await q(e,t)}async function Xe(e,t,r,n){return(await o(e,`UPDATE pgx_branch SET changes = $2::jsonb,
            deadline = CASE WHEN $3::bigint IS NULL THEN deadline ELSE greatest(deadline, now() + $3::bigint * interval '1 millisecond') END
      WHERE name = $1 AND state = 'retiring' RETURNING name`,[t,JSON.stringify(r),n])).length===1}async function We(e,t){let[r]=await o(e,"SELECT deadline < now() AS expired FROM pgx_branch WHERE name = $1",[t]);return!!r?.expired}async function Ke(e,t){await o(e,"DELETE FROM pgx_branch WHERE name = $1",[t])}async function qe(e,t){return o(e,`${S} WHERE b.deadline < now() ORDER BY b.deadline LIMIT $1`,[t])}async function Ye(e){let[t]=await o(e,"SELECT now() AS now");return new Date(t.now).getTime()}async function Ge(e,t,r){let[n]=await e.query(`UPDATE pgx_branch b SET last_seen_at = now(), deadline = now() + b.idle_ttl_ms * interval '1 millisecond'
       FROM pg_database d
      WHERE b.identity_key = $1 AND b.state = 'active' AND d.datname = b.name AND d.datallowconn
        AND shobj_description(d.oid, 'pg_database') = $2 || COALESCE(':' || b.nonce, '')
     RETURNING b.*, true AS db_exists`,[t,r]);return n}var I="b.kind = 'subagent' AND NOT (b.merged_at IS NOT NULL AND b.state <> 'active')";async function Je(e,t,r){await o(e,"UPDATE pgx_branch SET fork_point = $2 WHERE name = $1",[t,r])}async function Ze(e,t){return(await o(e,`SELECT b.name FROM pgx_branch b WHERE b.fork_point = $1 AND ${I} ORDER BY b.name`,[t])).map(n=>n.name)}async function et(e){let t=await o(e,`SELECT DISTINCT b.base_template::text AS oid FROM pgx_branch b WHERE b.fork_point IS NULL AND b.base_template IS NOT NULL AND ${I}`);return new Set(t.map(r=>r.oid))}async function tt(e,t,r){await o(e,`UPDATE pgx_branch SET merged_into = $2, merged_at = now(),
            deadline = CASE WHEN state = 'retiring' THEN least(deadline, now() + grace_ms * interval '1 millisecond') ELSE deadline END
      WHERE name = $1`,[t,r])}async function rt(e){let[t]=await e.query("SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('pgx_branch') AND attname = 'merged_at') AS ok");if(!t.ok)return new Map;let r=await e.query(`SELECT b.fork_point AS name, count(*)::int AS n FROM pgx_branch b WHERE b.fork_point IS NOT NULL AND ${I} GROUP BY 1`);return new Map(r.map(n=>[n.name,n.n]))}import{readFileSync as G,statSync as z,statfsSync as V}from"node:fs";import{isAbsolute as Q,join as C}from"node:path";var J=16*1024*1024,v=new Map;function H(e){let t=`${e.config.serverUrl?"url":"local"}:${e.admin.user}@${e.admin.host}:${e.admin.port}`,r=v.get(t);return r||(r=Z(e).catch(n=>(v.delete(t),{dataDir:null,why:`the server's data directory could not be read (${n.message})`})),v.set(t,r)),r}async function Z(e){let t=await F(e.registry),r=t.sharedBuffers;if(!e.config.serverUrl){let a=M(e.config.home);if(a?.data_dir&&a.port===e.admin.port)return{dataDir:a.data_dir,proof:"local server",owed:r}}if(!t.dataDirectory)return{dataDir:null,why:`the role "${e.admin.user}" may not read the server's data_directory (it needs superuser or pg_read_all_settings)`};let n=t.dataDirectory,i;try{i=G(C(n,"postmaster.pid"),"utf8").split(`
`)}catch(a){let d=a.code;return(d==="EACCES"||d==="EPERM")&&ee(e.admin.host)&&te(n)?{dataDir:n,proof:"path",owed:r}:{dataDir:null,why:`its data directory ${n} is not on this machine (a remote server)`}}return i[1]===n&&Number(i[3])===t.port&&Math.abs(Number(i[2])-t.startedAt)<=2?{dataDir:n,proof:"postmaster.pid",owed:r}:{dataDir:null,why:`${n} on this machine belongs to another server than the one connected to`}}function ee(e){return e.startsWith("/")||e==="localhost"||e==="::1"||e==="[::1]"||/^127\./.test(e)}function te(e){try{return z(e),!0}catch{return!1}}function O(e){try{let t=V(e);return{path:e,dev:z(e).dev,free:t.bavail*t.bsize,size:t.blocks*t.bsize}}catch{return}}function j(e,t){return Math.min(e.bytes??1/0,e.percent!==void 0?Math.ceil(t*e.percent/100):1/0)}function re(e,t){return e==="cow"?{files:Math.min(t,J),wal:0}:e==="file-copy"?{files:t,wal:0}:{files:t,wal:t}}var R=new Map;function ne(e,t,r,n,i=!1){let s=new Map;for(let a of e){let d=s.get(a.fs.dev);s.set(a.fs.dev,{fs:d?.fs??a.fs,bytes:(d?.bytes??0)+a.bytes})}for(let{fs:a,bytes:d}of s.values()){let b=j(t,a.size),_=i?2*b:b,T=r(a.dev);if(a.free-n-T-d<_)return{fs:a,needed:d,inFlight:T,owed:n,reserve:b,floor:_}}}var A=class extends N{constructor(r,n,i){let s=r,a=s.floor>s.reserve?`, and the warm pool leaves twice that (${f(s.floor)})`:"",d=[s.owed?`up to ${f(s.owed)} the server may still write from its buffers`:"",s.in_flight?`${f(s.in_flight)} promised to copies already running`:""].filter(Boolean),b=d.length?` (less ${d.join(" and ")})`:"";super("DISK_RESERVE",`Not enough disk for ${s.what}: it needs ~${f(s.needed)} on the file system of ${s.path}, which has ${f(s.free)} free of ${f(s.size)}${b}; pgx keeps ${f(s.reserve)} free there (${n})${a}.`,`Free space on that file system (\`pgx agent gc\` drops expired branches and unused templates; \`pgx agent pool drain\` drops the warm pool's members; \`pgx agent ls --all\` shows what pgx holds), or lower [disk] reserve in ${i}; then retry.`,{data:{disk:r}});this.figures=r}figures};function dt(e){return e instanceof A}function f(e){let t=Math.abs(e);return t>=1024**3?`${(e/1024**3).toFixed(1)} GB`:t>=1024**2?`${Math.round(e/1024**2)} MB`:`${Math.round(e/1024)} kB`}function X(e){let t=e.bytes!==void 0?f(e.bytes).replace(/ /g,"").replace(/\.0(?=[GMk]B)/,""):void 0;return t!==void 0&&e.percent!==void 0?`[disk] reserve unset: ${t}, or ${e.percent}% of a smaller file system`:`[disk] reserve = "${t??`${e.percent}%`}"`}async function lt(e,t,r,n={}){let i=await ie(e,t,n.speculative??!1);try{return await r()}finally{for(let[s,a]of i)R.set(s,(R.get(s)??0)-a)}}async function ie(e,t,r){let n=new Map,i=await H(e);if(!i.dataDir)return n;let s=await P(e.registry,t.from);if(!s)return n;let a=t.way==="dump-restore"||s.location===""?i.dataDir:Q(s.location)?s.location:C(i.dataDir,s.location),d=O(a);if(!d)return n;let{files:b,wal:_}=re(t.way,s.bytes),T=[{fs:d,bytes:b}];if(_){let l=O(C(i.dataDir,"pg_wal"))??O(i.dataDir);l&&T.push({fs:l,bytes:_})}let g=ne(T,e.config.disk.reserve,l=>R.get(l)??0,i.owed,r);if(g){let l={what:t.what,path:g.fs.path,free:g.fs.free,needed:g.needed,in_flight:g.inFlight,owed:g.owed,reserve:g.reserve,floor:g.floor,size:g.fs.size};throw new A(l,X(e.config.disk.reserve),e.config.file??".pgx.toml")}for(let l of T)n.set(l.fs.dev,(n.get(l.fs.dev)??0)+l.bytes),R.set(l.fs.dev,(R.get(l.fs.dev)??0)+l.bytes);return n}async function gt(e){let t=await H(e);if(t.dataDir===null)return{visible:!1,why:t.why};let r=O(t.dataDir);return r?{visible:!0,proof:t.proof,fs:r,owed:t.owed,reserve:j(e.config.disk.reserve,r.size),reserve_setting:X(e.config.disk.reserve)}:{visible:!1,why:`statfs of its data directory ${t.dataDir} failed`}}export{c as a,y as b,oe as c,ce as d,de as e,le as f,ge as g,pe as h,me as i,ue as j,fe as k,be as l,Ee as m,ye as n,Te as o,he as p,_e as q,Ne as r,h as s,Se as t,k as u,Oe as v,Ae as w,o as x,Ue as y,q as z,$e as A,Pe as B,Fe as C,Be as D,Y as E,Me as F,ze as G,He as H,je as I,Xe as J,We as K,Ke as L,qe as M,Ye as N,Ge as O,Je as P,Ze as Q,et as R,tt as S,rt as T,dt as U,f as V,lt as W,gt as X};
