// The probe launcher's two jobs, for `pgx agent verify claude`'s routed runs: it stands where pgx's launcher stands,
// with no database behind it.
//  - `agent hook pre-tool-use`: the same decision as pgx's hook (planSubagentBash: the same rewrite, the same
//    refusals of a typed launcher and a bare exit), for a branch name that is never created. Every other hook event
//    answers nothing: only PreToolUse shapes what Claude Code's rules see.
//  - `agent exec --agent ID --cwd P -- <shell> -c CMD`: runs CMD in P, output and exit status unchanged, as pgx's exec
//    would, minus the database environment. It checks no routing ticket, unlike pgx's exec: what Claude Code let
//    through runs, so a rule that failed to hold shows as an effect on disk instead of being caught one layer later.
// The launcher script (run.ts) sets PGX_VERIFY_PROBE (its own path) and PGX_VERIFY_PROJECT for this process.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as P from '../hooks/claude/payloads.js';
import { launcherDeny, planSubagentBash } from '../hooks/claude/bash-plan.js';
import { invokesLauncher, ROUTED_MARKER, routedPrefix } from '../hooks/claude/rewrite.js';
import { parseRoutedExec } from '../exec/exec-argv.js';
import { shellQuote } from '../lib/shell.js';

/** The shell pgx's rewrite names: the one Claude Code runs Bash commands in. */
export const PROBE_SHELL = '/bin/bash';

const denyOut = (reason: string) => ({
  hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason },
});

/** The probe hook's answer to one PreToolUse payload (undefined: no output). Exported for the unit test. */
export function probePreToolUse(
  payload: unknown,
  launcher: string,
  projectDir: string,
  fault?: string,
): Record<string, unknown> | undefined {
  const parsed = P.preToolUseSchema.safeParse(payload);
  if (!parsed.success) return denyOut('pgx probe: invalid PreToolUse payload');
  const p = parsed.data;
  if (p.tool_name !== 'Bash') return undefined;
  const command = p.tool_input.command;
  if (p.agent_id === undefined)
    return typeof command === 'string' && invokesLauncher(command, launcher) ? launcherDeny().output : undefined;
  if (typeof command !== 'string') return denyOut('pgx probe: no command string');
  const params = { launcher, agentId: p.agent_id, projectDir, shell: PROBE_SHELL, branch: `probe_${p.agent_id}` };
  const plan = planSubagentBash(command, params);
  if (plan.kind === 'routed') return undefined;
  if (plan.kind === 'deny') return plan.result.output;
  // A test-only fault (PGX_VERIFY_FAULT, never recorded as verified): the rewrite pgx wrote before the verbatim copy,
  // which Claude Code's rules cannot see into. It proves the probe catches a rewrite that weakens a deny.
  const rewritten =
    fault === 'no-verbatim-copy'
      ? `${routedPrefix(params)}${PROBE_SHELL} -c ${shellQuote(command)} ${ROUTED_MARKER}${params.branch}`
      : plan.command;
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { ...p.tool_input, command: rewritten } } };
}

/** `pgx agent verify-probe -- <launcher args>`: the exit status. */
export function runProbe(args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const launcher = env.PGX_VERIFY_PROBE;
  const projectDir = env.PGX_VERIFY_PROJECT;
  if (!launcher || !projectDir) {
    process.stderr.write('pgx: agent verify-probe runs only under `pgx agent verify claude`\n');
    return 2;
  }
  const [a, b, event] = args;
  if (a === 'agent' && b === 'hook') {
    if (event !== 'pre-tool-use') return 0;
    let payload: unknown;
    try {
      payload = JSON.parse(readFileSync(0, 'utf8'));
    } catch {
      payload = undefined;
    }
    const out = probePreToolUse(payload, launcher, projectDir, env.PGX_VERIFY_FAULT);
    if (out) process.stdout.write(JSON.stringify(out) + '\n');
    return 0;
  }
  const exec = parseRoutedExec(args);
  if (!exec) {
    process.stderr.write(`pgx probe: not a routed exec: ${args.join(' ')}\n`);
    return 125;
  }
  const r = spawnSync(exec.command[0]!, exec.command.slice(1), { cwd: exec.cwd ?? projectDir, stdio: 'inherit' });
  return r.status ?? 125;
}
