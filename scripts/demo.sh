#!/usr/bin/env bash
# The main job, end to end, on the embedded default server: a project with a source database, three subagents of
# one Claude Code session each get their own branch through pgx's real hook handlers (payloads shaped like Claude
# Code's), run a migration through the rewritten command, are shown isolated, listed, and retired.
set -euo pipefail
PGX="$(cd "$(dirname "$0")/.." && pwd)/bin/pgx.js"
demo=$(mktemp -d "${TMPDIR:-/tmp}/pgx-demo-XXXXXX")
cd "$demo"
trap 'cd /; "$PGX" agent down --session "$SESSION" --now --cwd "$demo" >/dev/null 2>&1 || true; "$PGX" agent down --id setup --now --cwd "$demo/setup" >/dev/null 2>&1 || true' EXIT
unset PGX_DATABASE_URL # the embedded default: pgx runs its own PostgreSQL
say() { printf '\n\033[1m# %s\033[0m\n' "$*"; }
json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s);console.log(eval("v."+process.argv[1]))})' "$1"; }

SRC="demo_src_$$"
SESSION="$(node -e 'console.log(crypto.randomUUID())')"
printf '[project]\nname = "demo%s"\n' "$$" > .pgx.toml
# The admin's side of the demo: a project of its own with roles = "admin", so that its exec hands out the local
# server's admin credentials (the agents' projects get branch roles, which can't create databases or read the source).
mkdir setup && printf '[project]\nname = "demo%s-setup"\n[agent]\nroles = "admin"\n' "$$" > setup/.pgx.toml
admin() { "$PGX" agent exec --id setup --cwd "$demo/setup" -- "$@"; }

say "a source database (made through pgx exec in a setup project with roles = \"admin\": the local server's admin credentials)"
admin psql -X -q -d postgres -c "CREATE DATABASE $SRC"
admin psql -X -q -d "$SRC" -c "CREATE TABLE users (id serial primary key, email text); INSERT INTO users (email) VALUES ('ada@example.com');"
printf 'source = "%s"\n' "$SRC" >> .pgx.toml
cat .pgx.toml

for agent in a1users00000000001 a2account000000002 a3booking000000003; do
  say "SubagentStart for $agent"
  printf '{"session_id":"%s","cwd":"%s","hook_event_name":"SubagentStart","agent_id":"%s","agent_type":"general-purpose"}' "$SESSION" "$demo" "$agent" \
    | CLAUDE_PROJECT_DIR="$demo" "$PGX" agent hook subagent-start | json 'hookSpecificOutput.additionalContext'
  table="${agent:2:5}_migration"
  original="psql -X -q -c 'CREATE TABLE $table (id int)' && psql -X -Atc \"select current_database() || ': ' || string_agg(tablename, ',' order by tablename) from pg_tables where schemaname = 'public'\""
  payload=$(node -e 'const [s,c,a,cmd]=process.argv.slice(1);console.log(JSON.stringify({session_id:s,cwd:c,hook_event_name:"PreToolUse",agent_id:a,agent_type:"general-purpose",tool_name:"Bash",tool_input:{command:cmd,description:"migrate"},tool_use_id:"toolu_demo"}))' "$SESSION" "$demo" "$agent" "$original")
  rewritten=$(printf '%s' "$payload" | CLAUDE_PROJECT_DIR="$demo" "$PGX" agent hook pre-tool-use | json 'hookSpecificOutput.updatedInput.command')
  say "PreToolUse rewrote the agent's command to"
  echo "$rewritten"
  say "running it (as Claude Code would) — each agent sees only its own table"
  DATABASE_URL="postgresql://decoy@127.0.0.1:1/$SRC" bash -c "$rewritten"
done

say "the source is untouched"
admin psql -X -Atc "select string_agg(tablename, ',') from pg_tables where schemaname = 'public'" -d "$SRC"

say "pgx agent ls"
"$PGX" agent ls

for agent in a1users00000000001 a2account000000002 a3booking000000003; do
  printf '{"session_id":"%s","cwd":"%s","hook_event_name":"SubagentStop","agent_id":"%s","agent_type":"general-purpose","stop_hook_active":false}' "$SESSION" "$demo" "$agent" \
    | CLAUDE_PROJECT_DIR="$demo" "$PGX" agent hook subagent-stop
done
say "after SubagentStop: retired, kept for the grace period, then dropped by gc"
"$PGX" agent ls

say "cleaning up (drop the demo's branches now; the local server keeps running: pgx local status / pgx local down)"
"$PGX" agent down --session "$SESSION" --now
admin psql -X -q -d postgres -c "DROP DATABASE $SRC"
