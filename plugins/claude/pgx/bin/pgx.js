#!/bin/sh
":" //; # A sh/JS polyglot (decision 230): sh runs the lines that start with ":" //; and node reads each as a string
":" //; # and a comment. sh takes only the PreToolUse rewrite's exact `agent exec --agent <id> --cwd <dir> -- <cmd…>`:
":" //; # it asks this environment's broker over its shell socket (src/broker/shell-launcher.ts; curl, Linux /proc),
":" //; # evaluates the answer (the branch's variables set, the decoys unset; or the refusal and its exit code) and
":" //; # execs the command, so its status and signals are its own. Anything else, or any doubt, execs node below.
":" //; __pgx_sh() {
":" //;   [ "$1" = agent ] && [ "$2" = exec ] && [ "$3" = --agent ] && [ "$5" = --cwd ] && [ "$7" = -- ] && [ $# -gt 7 ] || return 0
":" //;   case ${PGX_SHELL_LAUNCHER-}/${PGX_BROKER-} in 0/*|[Oo][Ff][Ff]/*|*/0|*/[Oo][Ff][Ff]|*/[Ff][Aa][Ll][Ss][Ee]|*/[Nn][Oo]) return 0;; esac
":" //;   case $0 in /*/bin/pgx.js) ;; *) return 0;; esac
":" //;   [ -r /proc/self/status ] && [ -r "${0%/bin/pgx.js}/dist/build-id" ] && command -v curl >/dev/null 2>&1 || return 0
":" //;   read -r __pgx_b < "${0%/bin/pgx.js}/dist/build-id" || return 0
":" //;   __pgx_u=; while read -r __pgx_k __pgx_v __pgx_r; do [ "$__pgx_k" = Uid: ] && __pgx_u=$__pgx_v && break; done < /proc/self/status
":" //;   case ${XDG_RUNTIME_DIR-} in /*) __pgx_d=$XDG_RUNTIME_DIR/pgx;; *) __pgx_t=${TMPDIR:-${TMP:-${TEMP:-/tmp}}}; __pgx_d=${__pgx_t%/}/pgx-$__pgx_u;; esac
":" //;   [ -n "$__pgx_u" ] && [ -d "$__pgx_d" ] && [ ! -h "$__pgx_d" ] && [ -O "$__pgx_d" ] || return 0
":" //;   for __pgx_s in "$__pgx_d"/h-*.sock; do
":" //;     [ -S "$__pgx_s" ] && [ -O "$__pgx_s" ] || continue
":" //;     __pgx_a=$(curl -q -fs --noproxy '*' --max-time 120 --unix-socket "$__pgx_s" -G --data-urlencode "pid=$$" --data-urlencode "build=$__pgx_b" --data-urlencode "agent=$4" --data-urlencode "cwd=$6" http://pgx/exec 2>/dev/null) || continue
":" //;     case $__pgx_a in *'# pgx: end') ;; *) continue;; esac
":" //;     eval "$__pgx_a"
":" //;     shift 7
":" //;     exec "$@"
":" //;   done
":" //; }
":" //; __pgx_sh "$@"
":" //; exec node "$0" "$@"
// Every hook and every routed command (a subagent's, a Codex session's) starts this file, so it loads as little as it can: the light
// entry (dist/hook-fast.cjs) answers the parent's PreToolUse itself and hands the rest to the broker (src/broker/).
// What it can't answer goes to the in-process hook (dist/hook.cjs) or exec (dist/exec-fast.cjs), and anything else
// to the CLI bundle.
'use strict';
const [, , a, b, c, extra] = process.argv;

async function main() {
  if (a === 'agent' && b === 'hook' && c !== undefined && extra === undefined) {
    const text = await require('../dist/hook-fast.cjs').lightHook(c);
    if (text === undefined) process.exit(0); // answered, and written
    if (await require('../dist/hook.cjs').runHookArgv(process.argv.slice(2), text)) return;
  } else if (a === 'agent' && b === 'codex-hook' && c !== undefined && extra === undefined) {
    if (await require('../dist/codex-hook.cjs').fastCodexHook(process.argv.slice(2))) return;
  } else if (a === 'agent' && b === 'copilot-hook' && c !== undefined && extra === undefined) {
    if (await require('../dist/copilot-hook.cjs').fastCopilotHook(process.argv.slice(2))) return;
  } else if (a === 'agent' && b === 'exec' && (c === '--agent' || c === '--session')) {
    if (await require('../dist/hook-fast.cjs').fastRoutedExec(process.argv.slice(2))) return;
    if (await require('../dist/exec-fast.cjs').fastExec(process.argv.slice(2))) return;
  }
  await import('../dist/pgx.js');
}

main().catch((e) => {
  process.stderr.write(`pgx: ${e && e.message ? e.message : e}\n`);
  process.exit(1);
});
