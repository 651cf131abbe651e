#!/usr/bin/env bash
# The problem pgx solves, end to end, on the embedded default server (no Docker, nothing to configure): subagents of
# one Claude Code session share a database, so one agent's migration breaks another's, and a killed agent's open
# transaction lingers. Here three subagents get their own branches through pgx's real hook handlers (payloads shaped
# like Claude Code's): two run CONFLICTING migrations and each sees only its own; a third is killed mid-transaction
# and nothing of it is committed. Then a summary, and everything the demo made is removed again: it runs in a PGX_HOME
# and a temp dir of its own (its own local server and broker), purged at the end, so nothing of yours is touched and nothing of it
# stays (decisions/422-complete-uninstall.md). It needs nothing but Node and pgx (no psql: decision 487): the admin's
# SQL goes through `pgx local sql`, the agents' through scripts/demo-client.mjs, a Node client that reads libpq's
# environment as any application does.
set -euo pipefail
PGX_JS="$(cd "$(dirname "$0")/.." && pwd)/bin/pgx.js"
CLIENT="$(cd "$(dirname "$0")" && pwd)/demo-client.mjs" # the agents' tool: SQL over libpq's environment variables
pgx() { node "$PGX_JS" "$@"; }
unset PGX_DATABASE_URL DATABASE_URL PGHOST PGPORT PGUSER PGDATABASE PGPASSWORD PGSERVICE # the embedded default
demo=$(mktemp -d "${TMPDIR:-/tmp}/pgx-demo-XXXXXX")
mkdir "$demo/project" "$demo/pgx-home" "$demo/tmp"
touch "$demo/project/package.json" # a project (pgx init refuses a directory that is none)
# Its own PGX_HOME (so its own local server) and temp dir (so its own broker socket directory): the purge at the end
# stops its brokers and deletes its server, never yours.
export PGX_HOME="$demo/pgx-home" TMPDIR="$demo/tmp"
unset XDG_RUNTIME_DIR
PGX_STATE="$PGX_HOME"
cd "$demo/project"
SESSION="$(node -e 'console.log(crypto.randomUUID())')"
SRC="demo_src_$$"
cleanup() {
  cd /
  pgx agent down --session "$SESSION" --now --cwd "$demo/project" >/dev/null 2>&1 || true
  # A SubagentStart that cloned started the warm pool's filler in the background: let it finish (its pid file goes),
  # then drop its members, then the template they were cloned from.
  for _ in $(seq 600); do
    fillers=$(cat "$PGX_STATE"/agent/pool-fill-"demo$$"-*.pid 2>/dev/null || true)
    alive=0; for pid in $fillers; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  # The demo's own local server, its data and everything under its PGX_HOME (the hook log, handoffs, passfiles).
  pgx local down --purge --yes --cwd "$demo/project" >/dev/null 2>&1 || true
  rm -rf "$demo"
}
trap cleanup EXIT
# Bold headings on a terminal only (not when piped or logged, nor with NO_COLOR): pgx's own output does the same.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ] && [ "${TERM:-}" != dumb ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
say() { printf '\n%s# %s%s\n' "$bold" "$*" "$plain"; }
json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s);console.log(eval("v."+process.argv[1]))})' "$1"; }
hook() { # hook <event> <agent> [command]: the JSON Claude Code would send, through pgx's real handler
  node -e 'const [ev,s,c,a,cmd]=process.argv.slice(1);const names={"subagent-start":"SubagentStart","pre-tool-use":"PreToolUse","subagent-stop":"SubagentStop"};const p={session_id:s,cwd:c,hook_event_name:names[ev],agent_id:a,agent_type:"general-purpose"};if(ev==="pre-tool-use")Object.assign(p,{tool_name:"Bash",tool_input:{command:cmd,description:"demo"},tool_use_id:"toolu_demo"});if(ev==="subagent-stop")p.stop_hook_active=false;console.log(JSON.stringify(p))' "$1" "$SESSION" "$demo/project" "$2" "${3:-}" \
    | CLAUDE_PROJECT_DIR="$demo/project" node "$PGX_JS" agent hook "$1"
}
routed() { # routed <agent> <command>: PreToolUse rewrites it; the rewritten command runs as Claude Code would run it
  hook pre-tool-use "$1" "$2" | json 'hookSpecificOutput.updatedInput.command'
}
columns="select current_database() || ': ' || string_agg(column_name || ' ' || data_type, ', ' order by ordinal_position) from information_schema.columns where table_name = 'users'"

say "the local PostgreSQL (started on first use; nothing to install or configure)"
pgx local up

say "a project whose source database has a users table (pgx local sql: a way in to the local server, no psql needed)"
pgx local sql -c "CREATE DATABASE $SRC"
pgx local sql -d "$SRC" -c "CREATE TABLE users (id serial PRIMARY KEY, email text NOT NULL); INSERT INTO users (email) VALUES ('ada@example.com')"
pgx init --name "demo$$" --source "$SRC" >/dev/null
grep -E '^(name|source) ' .pgx.toml

A=a1billing00000000001
B=a2rewards0000000002
C=a3import00000000003
made_by() { # how SubagentStart made <agent>'s branch, as pgx's hook log recorded it (ok:clone or ok:claim)
  node -e '
const fs = require("fs"), path = require("path");
const [home, session, agent] = process.argv.slice(1);
const line = fs.readFileSync(path.join(home, "agent", "hooks.log"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((l) => l.session_id === session && l.agent_id === agent && l.event === "subagent-start").pop();
const how = { "ok:clone": "cloned from the template now", "ok:claim": "claimed from the warm pool (a clone made ahead of time)" };
console.log(how[line?.outcome] ?? `outcome ${line?.outcome ?? "unknown"}`);
' "$PGX_STATE" "$SESSION" "$1"
}
for agent in $A $B $C; do
  told=$(hook subagent-start "$agent" | json 'hookSpecificOutput.additionalContext' | cut -c1-150)
  say "SubagentStart $agent → its own branch, $(made_by "$agent"); what the agent is told:"
  echo "$told"
done

say "two agents run CONFLICTING migrations (on one shared database the second would fail: column \"plan\" already exists)"
cmd_a="node '$CLIENT' \"ALTER TABLE users ADD COLUMN plan text NOT NULL DEFAULT 'free'\" \"$columns\""
cmd_b="node '$CLIENT' \"ALTER TABLE users ADD COLUMN plan integer NOT NULL DEFAULT 0\" \"$columns\""
rewritten_a=$(routed $A "$cmd_a")
echo "PreToolUse rewrote $A's command to:"
echo "$rewritten_a" | sed 's/^/  /'
echo "each agent sees only its own migration:"
DATABASE_URL="postgresql://decoy@127.0.0.1:1/$SRC" bash -c "$rewritten_a"
bash -c "$(routed $B "$cmd_b")"

say "the source is untouched"
pgx local sql -d "$SRC" -c "$columns"

say "a third agent is killed in the middle of a transaction (1000 rows inserted, not yet committed)"
cmd_c="node '$CLIENT' BEGIN \"INSERT INTO users (email) SELECT 'bulk' || g FROM generate_series(1, 1000) g\" 'SELECT pg_sleep(600)' COMMIT"
rewritten_c=$(routed $C "$cmd_c")
set -m # the agent's command in its own process group, as Claude Code runs it, so it can be killed whole
bash -c "$rewritten_c" &
agent_pgid=$!
set +m
branch_c=$(pgx agent ls --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).branches.find(b=>b.agent_id===process.argv[1]).name))' "$C")
waiting="select count(*) from pg_stat_activity where datname = '$branch_c' and query like 'SELECT pg_sleep%'"
for _ in $(seq 100); do [ "$(pgx local sql -c "$waiting")" = 1 ] && break; sleep 0.1; done
# bash reports a killed job ("line N: … Killed") on the shell's stderr: the kill and its reaping are silenced together
{ kill -KILL -- "-$agent_pgid" && wait "$agent_pgid"; } 2>/dev/null || true
echo "killed (SIGKILL) while its transaction was open"
t0=$(date +%s%N)
for _ in $(seq 150); do [ "$(pgx local sql -c "select count(*) from pg_stat_activity where datname = '$branch_c'")" = 0 ] && break; sleep 0.1; done
echo "its server session ended $(( ($(date +%s%N) - t0) / 1000000 )) ms later (guard: client_connection_check_interval), rolled back:"
pgx agent exec --agent "$C" --session "$SESSION" -- node "$CLIENT" "select count(*) || ' rows committed by the killed agent' from users where email like 'bulk%'"

say "pgx agent ls"
pgx agent ls

for agent in $A $B $C; do hook subagent-stop "$agent" >/dev/null; done
say "after SubagentStop: retired (connections refused), kept for the grace period (one that changed something: [agent] keep_changed, 24h), then dropped by gc"
pgx agent ls

say "summary"
node -e '
const fs = require("fs"), path = require("path");
const [home, session] = process.argv.slice(1);
const lines = fs.readFileSync(path.join(home, "agent", "hooks.log"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((l) => l.session_id === session);
const made = lines.filter((l) => l.event === "subagent-start" && /^ok:(clone|claim)/.test(l.outcome));
const retired = lines.filter((l) => l.event === "subagent-stop" && /^retired/.test(l.outcome));
const ms = made.map((l) => l.elapsed_ms);
const how = made.map((l) => l.outcome.slice(3)).join(" / ");
const claims = made.filter((l) => l.outcome === "ok:claim").length;
const note = claims ? `; a claim took a branch the warm pool cloned ahead of time` : "";
console.log(`${made.length} branches made, ${ms.join(" / ")} ms each (${how}; the whole SubagentStart hook, node start-up included; the first one also built the template${note})`);
console.log(`${retired.length} of ${made.length} retired at SubagentStop; conflicting migrations isolated; 0 rows from the killed agent; source untouched`);
' "$PGX_STATE" "$SESSION"
pgx agent down --session "$SESSION" --now >/dev/null
echo "cleaning up: the demo's local server (its branches, template and source with it), its PGX_HOME and $demo are deleted on exit"
