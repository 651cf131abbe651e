#!/bin/sh
":" //; # A sh/JS polyglot (decisions 230, 441, 445): sh runs the lines that start with ":" //; and node reads each as a
":" //; # string and a comment. sh takes two forms to this user's broker (src/broker/shell-launcher.ts, Linux /proc) and
":" //; # starts no node for them: the PreToolUse rewrite's exact `agent exec --agent <id> --cwd <dir> -- <cmd…>` (it asks
":" //; # with perl's bare socket calls, 3 ms, else curl, 8 ms; evals the answer and execs the command, so its status and
":" //; # signals are its own), and `agent hook <event>` (the same client sends stdin, unread, and sh prints the answer). A refused
":" //; # hook leaves stdin unread (Expect: 100-continue); anything else, or any doubt, execs node below. Once the broker
":" //; # read a hook's stdin, no answer is a PreToolUse deny (a SessionStart warning).
":" //; __pgx_sh() {
":" //;   if [ "$1" = agent ] && [ "$2" = exec ] && [ "$3" = --agent ] && [ "$5" = --cwd ] && [ "$7" = -- ] && [ $# -gt 7 ]; then __pgx_m=
":" //;   elif [ $# = 3 ] && [ "$1" = agent ] && [ "$2" = hook ]; then case $3 in pre-tool-use|subagent-start) __pgx_m=54;; subagent-stop|session-start) __pgx_m=27;; user-prompt-submit|session-end) __pgx_m=9;; *) return 0;; esac
":" //;     case ${PGX_HOOK_DEADLINE_MS-} in '') ;; *[!0-9]*) return 0;; *) __pgx_m=$((PGX_HOOK_DEADLINE_MS / 1000 + 2));; esac
":" //;   else return 0; fi
":" //;   case ${PGX_SHELL_LAUNCHER-}/${PGX_BROKER-} in 0/*|[Oo][Ff][Ff]/*|*/0|*/[Oo][Ff][Ff]|*/[Ff][Aa][Ll][Ss][Ee]|*/[Nn][Oo]) return 0;; esac
":" //;   __pgx_l=$0; case $__pgx_l in /*/bin/pgx.js) ;; /*) __pgx_l=$(readlink -f -- "$0" 2>/dev/null) && case $__pgx_l in /*/bin/pgx.js) ;; *) return 0;; esac || return 0;; *) return 0;; esac
":" //;   __pgx_p=; ! command -v perl >/dev/null 2>&1 || __pgx_p=perl
":" //;   [ -r /proc/self/status ] && [ -r "${__pgx_l%/bin/pgx.js}/dist/build-id" ] && { [ -n "$__pgx_p" ] || command -v curl >/dev/null 2>&1; } || return 0
":" //;   read -r __pgx_b < "${__pgx_l%/bin/pgx.js}/dist/build-id" || return 0
":" //;   __pgx_u=; while read -r __pgx_k __pgx_v __pgx_r; do [ "$__pgx_k" = Uid: ] && __pgx_u=$__pgx_v && break; done < /proc/self/status
":" //;   __pgx_t=${TMPDIR:-${TMP:-${TEMP-}}}; __pgx_h=${HOME%/}; __pgx_d=/tmp/pgx-$__pgx_u
":" //;   case ${XDG_RUNTIME_DIR-}:$__pgx_t:${HOME-} in /*) __pgx_d=$XDG_RUNTIME_DIR/pgx;; :/*) __pgx_d=${__pgx_t%/}/pgx-$__pgx_u;; ::/*) [ ${#__pgx_h} -le 59 ] && __pgx_d=$__pgx_h/.pgx/run;; esac
":" //;   [ -n "$__pgx_u" ] && [ -d "$__pgx_d" ] && [ ! -h "$__pgx_d" ] && [ -O "$__pgx_d" ] || return 0
":" //;   for __pgx_s in "$__pgx_d"/h-*.sock; do
":" //;     [ -S "$__pgx_s" ] && [ -O "$__pgx_s" ] || continue
":" //;     if [ -n "$__pgx_m" ]; then
":" //;       if [ -n "$__pgx_p" ]; then
":" //;         __pgx_a=$(perl -e 'alarm shift; socket(S, 1, 1, 0) && connect(S, pack(q{S Z*}, 1, shift)) or exit 7; $h = "POST /hook?" . shift() . " HTTP/1.1\r\nHost: pgx\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"; syswrite(S, $h) == length $h or exit 7; $a = q{}; until ($a =~ /\r\n\r\n/) { sysread(S, $b, 65536) > 0 or exit 7; $a .= $b } $a =~ s/\AHTTP\/1\.1 100 [^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n//s or exit 22; $d = q{}; $d .= $b while sysread(STDIN, $b, 65536) > 0; $c = (length $d ? sprintf(q{%x}, length $d) . "\r\n$d\r\n" : q{}) . "0\r\n\r\n"; while (length $c) { $w = syswrite(S, $c) or exit 55; substr($c, 0, $w) = q{} } $a .= $b while sysread(S, $b, 65536) > 0; $a =~ s/\AHTTP\/1\.1 200 [^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n//s or exit 56; print $a' "$__pgx_m" "$__pgx_s" "pid=$$&build=$__pgx_b&event=$3" 2>/dev/null); __pgx_c=$?
":" //;       else
":" //;         __pgx_a=$(curl -q -sf --noproxy '*' --max-time "$__pgx_m" --expect100-timeout "$__pgx_m" --unix-socket "$__pgx_s" -H 'Expect: 100-continue' -T - -X POST "http://pgx/hook?pid=$$&build=$__pgx_b&event=$3" 2>/dev/null); __pgx_c=$?
":" //;       fi
":" //;       case $__pgx_c/$__pgx_a in 2/*|7/*|22/*) continue;; 0/*'# pgx: end') printf '%s' "${__pgx_a%'# pgx: end'}"; exit 0;; esac
":" //;       [ "$3" = pre-tool-use ] && echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"pgx: its broker took the hook but did not answer, so the command was not routed to your database branch and did not run. Retry it; if this repeats, run `pgx agent broker stop` and `pgx agent doctor`."}}'
":" //;       [ "$3" = session-start ] && echo '{"systemMessage":"pgx WARNING: its broker took this session'"'"'s SessionStart hook but did not answer, so this session'"'"'s Bash commands use whatever database they did before. Run `pgx agent doctor`; a new session tries again."}'
":" //;       exit 0
":" //;     fi
":" //;     if [ -n "$__pgx_p" ]; then
":" //;       __pgx_a=$(perl -e 'alarm 120; socket(S, 1, 1, 0) && connect(S, pack(q{S Z*}, 1, shift)) or exit 7; $q = join q{&}, map { my ($k, $v) = split /=/, $_, 2; $v =~ s/([^A-Za-z0-9._~-])/sprintf(q{%%%02X}, ord $1)/ge; "$k=$v" } @ARGV; $r = "GET /exec?$q HTTP/1.1\r\nHost: pgx\r\nConnection: close\r\n\r\n"; syswrite(S, $r) == length $r or exit 7; $a = q{}; $a .= $b while sysread(S, $b, 65536) > 0; $a =~ s/\AHTTP\/1\.1 200 [^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n//s or exit 22; print $a' "$__pgx_s" "pid=$$" "build=$__pgx_b" "agent=$4" "cwd=$6" 2>/dev/null) || continue
":" //;     else
":" //;       __pgx_a=$(curl -q -fs --noproxy '*' --max-time 120 --unix-socket "$__pgx_s" -G --data-urlencode "pid=$$" --data-urlencode "build=$__pgx_b" --data-urlencode "agent=$4" --data-urlencode "cwd=$6" http://pgx/exec 2>/dev/null) || continue
":" //;     fi
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
    if (text === undefined) process.exit(process.exitCode ?? 0); // answered and written, or refused (exit 6)
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
