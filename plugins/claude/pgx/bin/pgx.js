#!/usr/bin/env node
// The parent session's PreToolUse runs on every main-thread Bash command: a small entry answers it before the CLI
// bundle loads (src/hooks/claude/fast-path.ts), and hands anything else to the CLI with the payload it read.
const [, , a, b, c, extra] = process.argv;
if (a === 'agent' && b === 'hook' && c === 'pre-tool-use' && extra === undefined) {
  const { fastPreToolUse } = await import('../dist/hook-fast.js');
  const text = await fastPreToolUse();
  if (text === undefined) process.exit(0);
  globalThis.__pgxHookStdin = text;
}
// A routed command's `agent exec --agent …` (one per subagent Bash command) runs without the CLI bundle too.
const routed = a === 'agent' && b === 'exec' && c === '--agent' && (await import('../dist/exec-fast.js')).fastExec(process.argv.slice(2));
if (!(await routed)) await import('../dist/pgx.js');
