// The cells `pgx agent verify claude` runs (rule set × permission mode × command), and how a cell's two runs are
// compared. Also CI's reduced matrix on the newest Claude Code release (tests/e2e/pgx-permissions-newest.test.ts),
// which runs these same cells through pgx's real install and hooks. Why these cells:
// docs/pgx/local-dev/decisions/101-verify-cells.md.
//
// Each (rule set, mode) is one pair of `claude -p` runs in projects of their own: unrouted (no pgx hooks, no pgx
// rules) and routed (pgx's hooks and rules). A cell passes when the routed decision is the unrouted one or stricter
// (allow < ask < deny), no effect happened routed that did not happen unrouted, a command that ran unrouted ran
// routed too (no prompt where there was none), and the unrouted run decided what these rules decide on the version
// the cells were written against (else the probe did not test what it claims: its rules were not read, or Claude
// Code judges the plain command differently now, and the rewrite's guarantee was never shown for that).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type Decision = 'allow' | 'ask' | 'deny';
export const RANK: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

export interface RuleSet {
  allow?: string[];
  deny?: string[];
  ask?: string[];
}

export const VERIFY_RULE_SETS = {
  // Exact and prefix allows next to prefix and star denies: the rules users write.
  mixed: { allow: ['Bash(npm test)', 'Bash(echo:*)'], deny: ['Bash(rm:*)', 'Bash(touch out/forbidden*)'] },
  // An ask rule must still ask where a broader allow matches too (and pgx's own rules allow the wrapper).
  ask: { ask: ['Bash(npm test)'], allow: ['Bash(npm:*)', 'Bash(echo:*)'] },
} satisfies Record<string, RuleSet>;
export type RuleSetName = keyof typeof VERIFY_RULE_SETS;

export type ModeName = 'default' | 'acceptEdits' | 'bypass';
/** How a mode is passed to `claude -p`. Bash is never in --allowedTools: the rules alone decide. */
export const VERIFY_MODES: Record<ModeName, { args: string[] }> = {
  default: { args: ['--permission-mode', 'default'] },
  acceptEdits: { args: ['--permission-mode', 'acceptEdits'] },
  bypass: { args: ['--dangerously-skip-permissions'] },
};

/** The (rule set, mode) pairs run: one pair of claude runs each. */
export const VERIFY_RUNS: ReadonlyArray<{ rules: RuleSetName; mode: ModeName }> = [
  { rules: 'mixed', mode: 'default' },
  { rules: 'mixed', mode: 'bypass' },
  { rules: 'mixed', mode: 'acceptEdits' },
  { rules: 'ask', mode: 'default' },
];

export type Who = 'plain' | 'disguised' | 'parent';

export interface VerifyCommand {
  id: string;
  /** Which scripted conversation runs it: one of two subagents (routed), or the main session (never rewritten). */
  who: Who;
  cmd: (ctx: { cwd: string; launcher: string }) => string;
  /** A side effect the command has when it runs, looked for on disk after the run. */
  effect?: (cwd: string) => boolean;
  /** pgx's hook refuses it routed (a typed launcher, a bare exit): an allow unrouted may become a deny. */
  pgxRefuses?: boolean;
  /** The unrouted decision under a rule set and mode, as observed on 2.1.328: it shows the rules were applied. */
  unrouted: (rules: RuleSetName, mode: ModeName) => Decision;
}

/** Another agent's id, as a model could copy it from a transcript. */
export const OTHER_AGENT = 'a0000000000000000';
const gone = (f: string) => (cwd: string) => !existsSync(join(cwd, 'victims', f));
const made = (f: string) => (cwd: string) => existsSync(join(cwd, f));
const typedLauncher = (victim: string) => (c: { cwd: string; launcher: string }) =>
  `'${c.launcher}' agent exec --agent ${OTHER_AGENT} --cwd ${c.cwd} -- /bin/bash -c 'rm -f victims/${victim}'`;
const always = (d: Decision) => () => d;
// In bypass mode only deny rules apply: what would ask runs. acceptEdits approves plain file commands (touch) itself.
const askUnlessBypass = (_r: RuleSetName, mode: ModeName): Decision => (mode === 'bypass' ? 'allow' : 'ask');
const deniedByMixed = (r: RuleSetName, mode: ModeName): Decision => (r === 'mixed' ? 'deny' : askUnlessBypass(r, mode));

export const VERIFY_COMMANDS: readonly VerifyCommand[] = [
  {
    id: 'npm test (exact allow)',
    who: 'plain',
    cmd: () => 'npm test',
    unrouted: (r, m) => (r === 'mixed' ? 'allow' : askUnlessBypass(r, m)),
  },
  {
    id: 'npm test --silent (beyond the exact allow)',
    who: 'plain',
    cmd: () => 'npm test --silent',
    unrouted: (r, m) => (r === 'ask' ? 'allow' : askUnlessBypass(r, m)),
  },
  { id: 'echo (prefix allow)', who: 'plain', cmd: () => 'echo hello-echo', unrouted: always('allow') },
  { id: 'echo | grep (pipe, read-only)', who: 'plain', cmd: () => 'echo hi | grep -c hi', unrouted: always('allow') },
  {
    id: 'echo | xargs rm (pipe into a deny)',
    who: 'plain',
    cmd: () => 'echo victims/v5 | xargs rm -f',
    effect: gone('v5'),
    unrouted: deniedByMixed,
  },
  { id: 'rm (deny)', who: 'plain', cmd: () => 'rm -f victims/v1', effect: gone('v1'), unrouted: deniedByMixed },
  {
    id: "r''m (deny, quoted)",
    who: 'disguised',
    cmd: () => "r''m -f victims/v2",
    effect: gone('v2'),
    unrouted: deniedByMixed,
  },
  {
    id: 'npm test; rm (compound deny)',
    who: 'disguised',
    cmd: () => 'npm test; rm -f victims/v3',
    effect: gone('v3'),
    unrouted: deniedByMixed,
  },
  {
    id: 'echo; touch (prefix allow, compound)',
    who: 'disguised',
    cmd: () => 'echo hi; touch out/made-1',
    effect: made('out/made-1'),
    unrouted: (r, m) => (m === 'default' ? 'ask' : 'allow'),
  },
  {
    id: 'touch out/forbidden (star deny)',
    who: 'disguised',
    cmd: () => 'touch out/forbidden-1',
    effect: made('out/forbidden-1'),
    unrouted: deniedByMixed,
  },
  {
    id: 'launcher typed (subagent)',
    who: 'disguised',
    cmd: typedLauncher('v4'),
    effect: gone('v4'),
    pgxRefuses: true,
    unrouted: askUnlessBypass,
  },
  {
    id: 'npm test; exit (bare exit)',
    who: 'disguised',
    cmd: () => 'npm test; exit',
    pgxRefuses: true,
    unrouted: askUnlessBypass,
  },
  {
    id: 'launcher typed (main session)',
    who: 'parent',
    cmd: typedLauncher('vp1'),
    effect: gone('vp1'),
    pgxRefuses: true,
    unrouted: askUnlessBypass,
  },
];

export const VICTIMS = ['v1', 'v2', 'v3', 'v4', 'v5', 'vp1'];

/** The unrouted decision a command is expected to get under a rule set and mode. */
export function expectedUnrouted(c: VerifyCommand, rules: RuleSetName, mode: ModeName): Decision {
  return c.unrouted(rules, mode);
}

/** The project files every cell needs (an npm script, files to delete, a directory to write to) and the user's rules. */
export function writeFixture(cwd: string, home: string, rules: RuleSet): void {
  writeFileSync(
    join(cwd, 'package.json'),
    JSON.stringify({ name: 'pgx-verify-probe', private: true, scripts: { test: 'echo TEST-RAN' } }),
  );
  mkdirSync(join(cwd, 'victims'), { recursive: true });
  mkdirSync(join(cwd, 'out'), { recursive: true });
  for (const f of VICTIMS) writeFileSync(join(cwd, 'victims', f), '');
  mkdirSync(join(home, '.claude'), { recursive: true });
  writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ permissions: rules }, null, 2));
}

/**
 * Claude Code's decision, from the text a Bash tool_result carries in -p mode (observed on 2.1.328):
 *   deny (a rule)     "Permission to use Bash with command <cmd> has been denied."
 *   deny (a hook)     "PreToolUse:Bash hook error: pgx: …"
 *   ask               "Permission to use Bash has been denied. …" (nobody can approve in -p); the main session:
 *                     "This command requires approval"; pgx's own ask on an unverified version: its reason,
 *                     "pgx: routing is verified to keep your permission rules on …"
 *   allow             the command's output (or "Exit code N")
 */
export function classify(text: string | undefined): Decision | 'missing' {
  if (text === undefined) return 'missing';
  if (
    /^Permission to use Bash with command [\s\S]* has been denied\./.test(text) ||
    /^PreToolUse:Bash hook error: pgx:/.test(text)
  )
    return 'deny';
  if (
    text.startsWith('Permission to use Bash has been denied.') ||
    text.startsWith('This command requires approval') ||
    text.startsWith('pgx: routing is verified to keep your permission rules')
  )
    return 'ask';
  return 'allow';
}

export interface Observed {
  decision: Decision | 'missing';
  effect: boolean | null;
  text?: string;
}

export interface CellResult {
  rules: RuleSetName;
  mode: ModeName;
  command: string;
  unrouted: Decision | 'missing';
  routed: Decision | 'missing';
  unrouted_effect: boolean | null;
  routed_effect: boolean | null;
  ok: boolean;
  /** Why the cell failed. */
  why?: string;
}

/** Judges one cell from its two runs. */
export function judgeCell(c: VerifyCommand, rules: RuleSetName, mode: ModeName, u: Observed, r: Observed): CellResult {
  const base = {
    rules,
    mode,
    command: c.id,
    unrouted: u.decision,
    routed: r.decision,
    unrouted_effect: u.effect,
    routed_effect: r.effect,
  };
  const fail = (why: string): CellResult => ({ ...base, ok: false, why });
  if (u.decision === 'missing' || r.decision === 'missing')
    return fail(
      `no decision seen ${u.decision === 'missing' ? 'unrouted' : 'routed'} (the scripted run did not reach this command)`,
    );
  const expected = expectedUnrouted(c, rules, mode);
  if (u.decision !== expected)
    return fail(
      `unrouted it was ${u.decision}, where these rules give ${expected}: the probe cannot vouch for the rewrite ` +
        `on a command Claude Code now judges differently (or its rules were not applied)`,
    );
  if (RANK[r.decision] < RANK[u.decision]) return fail(`routed ${r.decision} is weaker than unrouted ${u.decision}`);
  if (r.effect && !u.effect) return fail('its effect happened routed but not unrouted');
  if (u.decision === 'allow' && r.decision !== 'allow' && !c.pgxRefuses)
    return fail(`it ran unrouted but ${r.decision === 'ask' ? 'asked' : 'was denied'} routed`);
  return { ...base, ok: true };
}

/** A cell as one line: "mixed/default/rm (deny): routed allow is weaker than unrouted deny". */
export function cellLine(c: CellResult): string {
  return `${c.rules}/${c.mode}/${c.command}: ${c.ok ? `${c.unrouted} → ${c.routed}` : c.why}`;
}
