#!/usr/bin/env node
// The parent session's PreToolUse runs on every main-thread Bash command: a small entry answers it before the CLI
// bundle loads (src/hooks/claude/fast-path.ts), and hands anything else to the CLI with the payload it read.
import { createRequire } from 'node:module';
const hot = createRequire(import.meta.url); // the hot-path entries are single CommonJS files (scripts/build.mjs)
const [, , a, b, c, extra] = process.argv;
if (a === 'agent' && b === 'hook' && c === 'pre-tool-use' && extra === undefined) {
  const { fastPreToolUse } = hot('../dist/hook-fast.cjs');
  const text = await fastPreToolUse();
  if (text === undefined) process.exit(0);
  globalThis.__pgxHookStdin = text;
}
// Every other hook (a subagent's PreToolUse above all) runs without the CLI bundle.
const hooked = a === 'agent' && b === 'hook' && (await hot('../dist/hook.cjs').fastHook(process.argv.slice(2)));
// A routed command's `agent exec --agent …` (one per subagent Bash command) runs without the CLI bundle too.
const routed = a === 'agent' && b === 'exec' && c === '--agent' && hot('../dist/exec-fast.cjs').fastExec(process.argv.slice(2));
if (!hooked && !(await routed)) await import('../dist/pgx.js');
