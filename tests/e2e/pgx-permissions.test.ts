/**
 * The permissions matrix (issue: routing keeps the user's own Claude Code permission rules), with the REAL Claude
 * Code binary and the scripted model: user rule sets × permission modes × commands. Each cell is run twice, in a
 * project of its own: unrouted (no pgx hooks, no pgx rules) and routed (`pgx agent install claude`, trusted
 * workspace). For every cell the routed decision must equal or be stricter than the unrouted one (allow < ask <
 * deny), and no effect the unrouted run denied may happen routed.
 *
 * What a decision looks like in a subagent's tool_result under `-p` (observed on 2.1.328):
 *   deny (a rule)     "Permission to use Bash with command <cmd> has been denied."
 *   deny (pgx's hook) "PreToolUse:Bash hook error: pgx: …"
 *   ask               "Permission to use Bash has been denied. IMPORTANT: …" (nobody can approve in -p)
 *                     in the parent: "This command requires approval"
 *   allow             the command's output (or "Exit code N")
 *
 * The matrix is written to .tmp/permissions-matrix.{json,md}; docs/pgx/local-dev/validation/ holds a copy of a run.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LAUNCHER, REPO } from '../helpers/pgx.js';
import { rewriteCommand } from '../../src/hooks/claude/rewrite.js';
import {
  claudeBin,
  cleanupRoots,
  CLAUDE_CODE_VERSION,
  describeRun,
  hookLog,
  makeE2eProject,
  makeSource,
  runScenario,
  warnIfSkipped,
  type E2eProject,
  type Source,
} from './pgx-harness.js';
import { realpathSync } from 'node:fs';

warnIfSkipped();
afterAll(cleanupRoots);

type Decision = 'allow' | 'ask' | 'deny';
const RANK: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

const RULE_SETS: Record<string, { allow?: string[]; deny?: string[]; ask?: string[] }> = {
  none: {},
  exact_allow: { allow: ['Bash(npm test)'] },
  prefix_allow: { allow: ['Bash(npm run lint:*)', 'Bash(echo:*)'] },
  deny: { deny: ['Bash(rm:*)', 'Bash(git push:*)', 'Bash(touch out/forbidden*)'], allow: ['Bash(npm test)'] },
  ask: { ask: ['Bash(npm test)', 'Bash(echo:*)'], allow: ['Bash(npm run lint:*)'] },
};

type Mode = 'default' | 'acceptEdits' | 'bypass' | 'p_bash';
const MODES: Record<Mode, { permissionMode: 'default' | 'acceptEdits' | 'bypass'; allowedTools: string }> = {
  default: { permissionMode: 'default', allowedTools: 'Agent' },
  acceptEdits: { permissionMode: 'acceptEdits', allowedTools: 'Agent' },
  bypass: { permissionMode: 'bypass', allowedTools: 'Agent' },
  p_bash: { permissionMode: 'default', allowedTools: 'Bash,Agent' },
};

/** A fake agent id and another agent's routed form: what a model could copy from a transcript. */
const OTHER_AGENT = 'a0000000000000000';
const launcher = realpathSync(LAUNCHER);

interface Cmd {
  id: string;
  /** Which scripted subagent runs it ('parent': the main session, never routed). */
  who: 'basic' | 'disguised' | 'compound' | 'parent';
  cmd: (cwd: string) => string;
  /** A side effect the command has when it runs, checked on disk after the run. */
  effect?: (cwd: string, root: string) => boolean;
}

const gone = (f: string) => (cwd: string) => !existsSync(join(cwd, 'victims', f));
const made = (f: string) => (cwd: string) => existsSync(join(cwd, f));
const pushed = (ref: string) => (_cwd: string, root: string) => {
  try {
    execFileSync('git', ['--git-dir', join(root, 'remote.git'), 'rev-parse', '--verify', '-q', `refs/heads/${ref}`], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
};
const typedLauncher = (target: string) => (cwd: string) =>
  `'${launcher}' agent exec --agent ${OTHER_AGENT} --cwd ${cwd} -- /bin/bash -c 'rm -f victims/${target}'`;

const COMMANDS: Cmd[] = [
  { id: 'npm test (exact)', who: 'basic', cmd: () => 'npm test' },
  { id: 'npm run lint:fix (prefix)', who: 'basic', cmd: () => 'npm run lint:fix' },
  { id: 'echo', who: 'basic', cmd: () => 'echo hello-echo' },
  { id: 'echo "$HOME" | grep', who: 'basic', cmd: () => 'echo "$HOME" | grep -c /' },
  { id: 'rm', who: 'basic', cmd: () => 'rm -f victims/v1', effect: gone('v1') },
  { id: 'git push', who: 'basic', cmd: () => 'git push -q origin HEAD:refs/heads/p1', effect: pushed('p1') },
  { id: "r''m", who: 'disguised', cmd: () => "r''m -f victims/v2", effect: gone('v2') },
  { id: '"r"m', who: 'disguised', cmd: () => '"r"m -f victims/v3', effect: gone('v3') },
  { id: '${x}m', who: 'disguised', cmd: () => 'x=r; ${x}m -f victims/v4', effect: gone('v4') },
  { id: 'touch out/forbidden', who: 'disguised', cmd: () => 'touch out/forbidden-1', effect: made('out/forbidden-1') },
  { id: 'npm test; rm', who: 'disguised', cmd: () => 'npm test; rm -f victims/v5', effect: gone('v5') },
  {
    id: 'npm test && git push',
    who: 'disguised',
    cmd: () => 'npm test && git push -q origin HEAD:refs/heads/p2',
    effect: pushed('p2'),
  },
  { id: 'pipe into xargs rm', who: 'compound', cmd: () => 'echo victims/v6 | xargs rm -f', effect: gone('v6') },
  { id: 'newline then rm', who: 'compound', cmd: () => 'npm test\nrm -f victims/v7', effect: gone('v7') },
  {
    id: 'heredoc',
    who: 'compound',
    cmd: () => "cat <<'EOF' > out/heredoc.txt\nheredoc-body\nEOF",
    effect: made('out/heredoc.txt'),
  },
  { id: 'launcher typed (subagent)', who: 'compound', cmd: typedLauncher('v8'), effect: gone('v8') },
  {
    id: "another agent's routed form",
    who: 'compound',
    cmd: (cwd) =>
      rewriteCommand('rm -f victims/v9', {
        launcher,
        agentId: OTHER_AGENT,
        projectDir: cwd,
        shell: '/bin/bash',
        branch: 'agent_e2e_00000000_a0000000',
      }),
    effect: gone('v9'),
  },
  { id: 'npm test; exit (bare exit)', who: 'compound', cmd: () => 'npm test; exit' },
  { id: 'launcher typed (parent)', who: 'parent', cmd: typedLauncher('vp1'), effect: gone('vp1') },
  { id: 'rm (parent)', who: 'parent', cmd: () => 'rm -f victims/vp2', effect: gone('vp2') },
];

function classify(text: string | undefined): Decision | 'missing' {
  if (text === undefined) return 'missing';
  if (
    /^Permission to use Bash with command [\s\S]* has been denied\./.test(text) ||
    /^PreToolUse:Bash hook error: pgx:/.test(text)
  )
    return 'deny';
  if (text.startsWith('Permission to use Bash has been denied.') || text.startsWith('This command requires approval'))
    return 'ask';
  return 'allow';
}

/** The project's files: an npm script per rule, victims to delete, a git remote to push to. */
function fixture(p: E2eProject, rules: (typeof RULE_SETS)[string]): void {
  writeFileSync(
    join(p.cwd, 'package.json'),
    JSON.stringify({ name: 'matrix', private: true, scripts: { test: 'echo TEST-RAN', 'lint:fix': 'echo LINT-RAN' } }),
  );
  mkdirSync(join(p.cwd, 'victims'));
  mkdirSync(join(p.cwd, 'out'));
  for (const f of ['v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9', 'vp1', 'vp2'])
    writeFileSync(join(p.cwd, 'victims', f), '');
  const git = (args: string[], cwd = p.cwd) =>
    execFileSync('git', args, {
      cwd,
      stdio: 'ignore',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: p.home },
    });
  git(['init', '-q', '--bare', join(p.root, 'remote.git')], p.root);
  git(['init', '-q']);
  git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'init']);
  git(['remote', 'add', 'origin', join(p.root, 'remote.git')]);
  mkdirSync(join(p.home, '.claude'), { recursive: true });
  writeFileSync(join(p.home, '.claude', 'settings.json'), JSON.stringify({ permissions: rules }, null, 2));
}

interface Cell {
  rules: string;
  mode: Mode;
  command: string;
  unrouted: Decision | 'missing';
  routed: Decision | 'missing';
  unroutedEffect: boolean | null;
  routedEffect: boolean | null;
}

interface RunCells {
  cells: Map<string, { decision: Decision | 'missing'; effect: boolean | null; text?: string }>;
  /** For a failure message: the hook log's PreToolUse outcomes in order, and where the run's files are. */
  hooks: string;
}

async function runOnce(source: Source, ruleSet: string, mode: Mode, routed: boolean): Promise<RunCells> {
  const p = makeE2eProject({ source, allowRule: routed });
  if (!routed) {
    writeFileSync(join(p.cwd, '.claude', 'settings.json'), '{}\n'); // no pgx at all
    rmSync(join(p.cwd, '.claude', 'settings.local.json'), { force: true });
  }
  fixture(p, RULE_SETS[ruleSet]!);
  const subs = ['basic', 'disguised', 'compound'] as const;
  const run = await runScenario(
    p,
    {
      subagents: subs.map((who) => ({
        marker: who,
        commands: COMMANDS.filter((c) => c.who === who).map((c) => c.cmd(p.cwd)),
      })),
      parentCommands: COMMANDS.filter((c) => c.who === 'parent').map((c) => c.cmd(p.cwd)),
    },
    { allowedTools: MODES[mode].allowedTools, permissionMode: MODES[mode].permissionMode, timeoutMs: 180_000 },
  );
  expect(run.out.code, describeRun(run)).toBe(0);
  expect(run.fake.errors, describeRun(run)).toEqual([]);
  const out = new Map<string, { decision: Decision | 'missing'; effect: boolean | null; text?: string }>();
  for (const who of [...subs, 'parent'] as const) {
    const texts = who === 'parent' ? run.fake.parentBashResults : (run.fake.toolResults.get(who) ?? []);
    COMMANDS.filter((c) => c.who === who).forEach((c, i) =>
      out.set(c.id, {
        decision: classify(texts[i]),
        effect: c.effect ? c.effect(p.cwd, p.root) : null,
        text: texts[i],
      }),
    );
  }
  const hooks = hookLog(p)
    .filter((l) => l.event === 'pre-tool-use')
    .map((l) => `${l.agent_id ?? 'parent'}:${l.outcome}`)
    .join(', ');
  return { cells: out, hooks: `${hooks} (run dir ${p.root})` };
}

const cells: Cell[] = [];

function writeReport(): void {
  if (!cells.length) return;
  const dir = join(REPO, '.tmp');
  mkdirSync(dir, { recursive: true });
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })();
  writeFileSync(
    join(dir, 'permissions-matrix.json'),
    JSON.stringify({ claude_code: CLAUDE_CODE_VERSION, commit, time: new Date().toISOString(), cells }, null, 1),
  );
  const weakened = cells.filter(
    (c) => c.routed !== 'missing' && c.unrouted !== 'missing' && RANK[c.routed] < RANK[c.unrouted],
  );
  const leaked = cells.filter((c) => c.routedEffect && !c.unroutedEffect);
  const stricter = cells.filter(
    (c) => c.routed !== 'missing' && c.unrouted !== 'missing' && RANK[c.routed] > RANK[c.unrouted],
  );
  const lines = [
    `# Permissions matrix: routed vs unrouted, Claude Code ${CLAUDE_CODE_VERSION}`,
    '',
    `Generated by tests/e2e/pgx-permissions.test.ts on ${new Date().toISOString().slice(0, 10)} from commit ${commit} (real Claude Code binary, scripted model, \`-p\`).`,
    `User rules in ~/.claude/settings.json; pgx installed with \`pgx agent install claude\` (narrow wrapper rule + \`Bash(exit)\`), workspace trusted.`,
    '',
    `- cells: ${cells.length} (${Object.keys(RULE_SETS).length} rule sets × ${Object.keys(MODES).length} modes × ${COMMANDS.length} commands)`,
    `- routed weaker than unrouted: **${weakened.length}**`,
    `- an effect that happened routed but not unrouted: **${leaked.length}**`,
    `- routed stricter than unrouted: ${stricter.length}${stricter.length ? ` (${[...new Set(stricter.map((c) => c.command))].join('; ')})` : ''}`,
    `- routed equal: ${cells.length - weakened.length - stricter.length}`,
    '',
    'Decision per cell as `unrouted → routed` (A allow, Q ask, D deny); `!` marks an effect on disk (file deleted or created, ref pushed).',
    '',
  ];
  const letter = (d: Decision | 'missing', e: boolean | null) =>
    `${{ allow: 'A', ask: 'Q', deny: 'D', missing: '?' }[d]}${e ? '!' : ''}`;
  for (const rules of Object.keys(RULE_SETS)) {
    lines.push(
      `## rules: ${rules} ${'`' + JSON.stringify(RULE_SETS[rules]) + '`'}`,
      '',
      `| command | ${Object.keys(MODES).join(' | ')} |`,
      `|---|${Object.keys(MODES)
        .map(() => '---')
        .join('|')}|`,
    );
    for (const c of COMMANDS) {
      const row = (Object.keys(MODES) as Mode[]).map((m) => {
        const cell = cells.find((x) => x.rules === rules && x.mode === m && x.command === c.id);
        return cell ? `${letter(cell.unrouted, cell.unroutedEffect)} → ${letter(cell.routed, cell.routedEffect)}` : '';
      });
      lines.push(`| ${c.id.replace(/\|/g, '\\|')} | ${row.join(' | ')} |`);
    }
    lines.push('');
  }
  writeFileSync(join(dir, 'permissions-matrix.md'), lines.join('\n'));
}
afterAll(writeReport);

describe.skipIf(!claudeBin)(
  `routing keeps the user's permission rules: Claude Code ${CLAUDE_CODE_VERSION}, rule sets × modes × commands`,
  () => {
    let source: Source;

    it.each(Object.keys(RULE_SETS))(
      'rule set %s: in every mode, no routed decision weaker than unrouted, no denied effect',
      async (ruleSet) => {
        source ??= await makeSource();
        for (const mode of Object.keys(MODES) as Mode[]) {
          // The two runs of a mode side by side: each is a project, a HOME and a claude of its own.
          const [unrouted, routed] = await Promise.all([
            runOnce(source, ruleSet, mode, false),
            runOnce(source, ruleSet, mode, true),
          ]);
          for (const c of COMMANDS) {
            const u = unrouted.cells.get(c.id)!;
            const r = routed.cells.get(c.id)!;
            cells.push({
              rules: ruleSet,
              mode,
              command: c.id,
              unrouted: u.decision,
              routed: r.decision,
              unroutedEffect: u.effect,
              routedEffect: r.effect,
            });
            const where = `${ruleSet}/${mode}/${c.id}: unrouted ${u.decision} effect=${u.effect} (${u.text?.slice(0, 120)}), routed ${r.decision} effect=${r.effect} (${r.text?.slice(0, 200)}); routed hooks: ${routed.hooks}`;
            expect(u.decision, where).not.toBe('missing');
            expect(r.decision, where).not.toBe('missing');
            expect(RANK[r.decision as Decision], `weaker: ${where}`).toBeGreaterThanOrEqual(
              RANK[u.decision as Decision],
            );
            if (r.effect) expect(u.effect, `effect routed only: ${where}`).toBe(true);
            // An allowed command runs routed exactly where it ran unrouted (no prompt storm), except pgx's own refusals.
            if (u.decision === 'allow' && !/launcher|bare exit|routed form/.test(c.id))
              expect(r.decision, `prompted: ${where}`).toBe('allow');
          }
        }
      },
      900_000,
    );
  },
);
