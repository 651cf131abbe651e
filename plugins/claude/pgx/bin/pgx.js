#!/usr/bin/env node
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
