// `pgx agent verify claude`: pgx's permission probe, run on this machine against the user's own Claude Code binary,
// offline. For each (rule set, mode) of cells.ts, two `claude -p` runs against a scripted model on 127.0.0.1
// (scripted-model.ts), in projects, HOMEs and PGX_HOMEs of their own that are deleted afterwards:
//  - unrouted: the user's rules only, no hooks;
//  - routed: the same rules, plus pgx's hooks and permission rules as `pgx agent install claude` writes them (the same
//    installClaude, project scope, workspace trusted), for a probe launcher (probe.ts) that answers PreToolUse with
//    pgx's own rewrite and runs the routed command without a database.
// Neither run sees the user's settings or hooks (a fresh HOME, a temp project) nor pgx's real hooks; PGX_VERIFY_PROBE in
// their environment stops a nested verify (and SessionStart's background start) from recursing.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { installClaude } from '../install/claude.js';
import { recordVerdict, verdictsPath, probeShape } from '../hooks/claude/claude-version.js';
import { shellQuote } from '../lib/shell.js';
import { PgxError } from '../lib/errors.js';
import { startScriptedModel } from './scripted-model.js';
import {
  classify,
  judgeCell,
  VERIFY_COMMANDS,
  VERIFY_MODES,
  VERIFY_RULE_SETS,
  VERIFY_RUNS,
  writeFixture,
  type CellResult,
  type ModeName,
  type Observed,
  type RuleSetName,
  type Who,
} from './cells.js';
import { claudeOnPath, claudeVersionOf } from './find-claude.js';

export interface VerifyOptions {
  /** The binary; default `claude` on PATH. */
  claude?: string;
  /** PGX_HOME: where the verdict is recorded. */
  home: string;
  /** pgx's own launcher (bin/pgx.js): the probe launcher runs its hidden `agent verify-probe`. */
  pgxLauncher: string;
  progress?: (line: string) => void;
  /** Test only (PGX_VERIFY_FAULT): a known-bad rewrite, to prove a failing cell is caught. Never recorded as verified. */
  fault?: string;
  /** Only record when the binary is this version (SessionStart's background run). */
  expectVersion?: string;
  /** Pairs run at once (each pair is two claude processes). */
  concurrency?: number;
  env?: NodeJS.ProcessEnv;
}

export interface VerifyResult {
  claude_code: string;
  binary: string;
  verified: boolean;
  cells: CellResult[];
  failed: string[];
  elapsed_ms: number;
  /** The verdict file, or null when nothing was recorded (a fault was injected and every cell still held). */
  recorded: string | null;
}

const PROMPT = 'Run the pgx verification subagents.';

export function findBinary(claude: string | undefined, env: NodeJS.ProcessEnv): string {
  if (claude) {
    try {
      return realpathSync(claude);
    } catch {
      throw new PgxError(
        'NOT_FOUND',
        `--claude ${claude}: no such file.`,
        'Pass the path of the Claude Code binary (`command -v claude`).',
      );
    }
  }
  const bin = claudeOnPath(env);
  if (!bin)
    throw new PgxError(
      'NOT_FOUND',
      'No `claude` on PATH: pgx has no Claude Code binary to verify.',
      'Install Claude Code, or pass its path with --claude PATH.',
    );
  return bin;
}

export async function verifyClaudeCode(o: VerifyOptions): Promise<VerifyResult> {
  const env = o.env ?? process.env;
  if (env.PGX_VERIFY_PROBE)
    throw new PgxError(
      'REFUSED',
      'pgx agent verify runs inside a verification already (PGX_VERIFY_PROBE is set): refusing to recurse.',
      'Run it from your own shell, not from a probe run.',
    );
  const t0 = Date.now();
  const progress = o.progress ?? (() => {});
  const binary = findBinary(o.claude, env);
  const version = claudeVersionOf(binary, env);
  if (!version)
    throw new PgxError(
      'INVALID_INPUT',
      `${binary} --version printed no Claude Code version.`,
      'Pass the Claude Code binary with --claude PATH.',
    );
  if (o.expectVersion && version !== o.expectVersion)
    throw new PgxError(
      'NOT_FOUND',
      `${binary} is Claude Code ${version}, not ${o.expectVersion}.`,
      `Run \`pgx agent verify claude --claude PATH\` with the ${o.expectVersion} binary.`,
    );
  const cellCount = VERIFY_RUNS.length * VERIFY_COMMANDS.length;
  progress(
    `verifying Claude Code ${version} (${binary}): ${cellCount} cells (${VERIFY_RUNS.length} rule set × mode ` +
      `pairs × ${VERIFY_COMMANDS.length} commands), each unrouted and routed, offline`,
  );
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'pgx-verify-')));
  const runId = randomUUID();
  const cells: CellResult[] = [];
  try {
    const queue = [...VERIFY_RUNS];
    const worker = async () => {
      for (let pair = queue.shift(); pair; pair = queue.shift()) {
        const t = Date.now();
        const name = `${pair.rules}/${pair.mode}`;
        const [u, r] = await Promise.all([
          probeRun(root, binary, o, env, runId, pair.rules, pair.mode, false),
          probeRun(root, binary, o, env, runId, pair.rules, pair.mode, true),
        ]);
        const these = VERIFY_COMMANDS.map((c) =>
          judgeCell(
            c,
            pair.rules,
            pair.mode,
            u.get(c.id) ?? { decision: 'missing', effect: null },
            r.get(c.id) ?? { decision: 'missing', effect: null },
          ),
        );
        cells.push(...these);
        const bad = these.filter((c) => !c.ok);
        progress(
          `  ${name}: ${these.length - bad.length}/${these.length} cells hold${bad.length ? `; FAILED: ${bad.map((c) => c.command).join('; ')}` : ''} ` +
            `(${((Date.now() - t) / 1000).toFixed(1)} s)`,
        );
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, o.concurrency ?? 2) }, worker));
  } finally {
    killRunProcesses(runId);
    rmSync(root, { recursive: true, force: true });
  }
  const order = (c: CellResult) =>
    VERIFY_RUNS.findIndex((p) => p.rules === c.rules && p.mode === c.mode) * 100 +
    VERIFY_COMMANDS.findIndex((x) => x.id === c.command);
  cells.sort((a, b) => order(a) - order(b));
  const failed = cells.filter((c) => !c.ok).map((c) => `${c.rules}/${c.mode}/${c.command}: ${c.why}`);
  const verified = failed.length === 0 && !o.fault;
  const elapsed = Date.now() - t0;
  let recorded: string | null = null;
  if (!o.fault || failed.length > 0) {
    recordVerdict(o.home, version, {
      verified,
      shape: probeShape(),
      time: new Date().toISOString(),
      binary,
      failed,
      cells: cells.length,
      elapsed_ms: elapsed,
    });
    recorded = verdictsPath(o.home);
  }
  return { claude_code: version, binary, verified, cells, failed, elapsed_ms: elapsed, recorded };
}

/** One `claude -p` run of a (rule set, mode): each command's decision and effect. */
async function probeRun(
  root: string,
  binary: string,
  o: VerifyOptions,
  env: NodeJS.ProcessEnv,
  runId: string,
  rules: RuleSetName,
  mode: ModeName,
  routed: boolean,
): Promise<Map<string, Observed>> {
  const dir = join(root, `${rules}-${mode}-${routed ? 'routed' : 'unrouted'}`);
  const cwd = join(dir, 'project');
  const home = join(dir, 'home');
  for (const d of [cwd, home, join(dir, 'tmp'), join(dir, 'pgx-home')]) mkdirSync(d, { recursive: true });
  writeFixture(cwd, home, VERIFY_RULE_SETS[rules]);
  // Claude Code applies project-scope permission rules only in a trusted workspace (as a user's is after the first
  // interactive start); both runs are trusted, so the only difference between them is pgx.
  writeFileSync(join(home, '.claude.json'), JSON.stringify({ projects: { [cwd]: { hasTrustDialogAccepted: true } } }));
  const launcher = join(dir, 'pgx');
  writeFileSync(
    launcher,
    `#!/bin/sh\n# pgx agent verify's probe launcher (src/verify/probe.ts): pgx's hook decisions and routed ` +
      `exec, with no database.\nPGX_VERIFY_PROBE=${shellQuote(launcher)} PGX_VERIFY_PROJECT=${shellQuote(cwd)} ` +
      `exec ${shellQuote(process.execPath)} ${shellQuote(o.pgxLauncher)} agent verify-probe -- "$@"\n`,
  );
  chmodSync(launcher, 0o755);
  // The routed project gets exactly what `pgx agent install claude` writes there: the six hooks and the rules.
  if (routed)
    installClaude({ settingsPath: join(cwd, '.claude', 'settings.json'), launcher, projectDir: cwd, rules: true });
  const ctx = { cwd, launcher };
  const forWho = (who: Who) => VERIFY_COMMANDS.filter((c) => c.who === who);
  const model = await startScriptedModel({
    subagents: (['plain', 'disguised'] as const).map((who) => ({
      marker: who,
      commands: forWho(who).map((c) => c.cmd(ctx)),
    })),
    parentCommands: forWho('parent').map((c) => c.cmd(ctx)),
  });
  try {
    const code = await runClaude(binary, [...VERIFY_MODES[mode].args], {
      cwd,
      env: {
        HOME: home,
        PATH: [dirname(process.execPath), env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(delimiter),
        ANTHROPIC_BASE_URL: model.url,
        ANTHROPIC_API_KEY: 'pgx-verify-offline',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_TMPDIR: join(dir, 'tmp'),
        PGX_HOME: join(dir, 'pgx-home'),
        PGX_VERIFY_PROBE: launcher, // the recursion guard, in every process this run starts
        PGX_VERIFY_RUN: runId,
        ...(mode === 'bypass' ? { IS_SANDBOX: '1' } : {}), // as root, bypass mode is refused outside a sandbox
        ...(o.fault ? { PGX_VERIFY_FAULT: o.fault } : {}),
      },
    });
    const out = new Map<string, Observed>();
    const failedRun = code !== 0 || model.errors.length > 0;
    for (const who of ['plain', 'disguised', 'parent'] as const) {
      const texts = who === 'parent' ? model.parentBashResults : (model.toolResults.get(who) ?? []);
      forWho(who).forEach((c, i) =>
        out.set(c.id, {
          decision: failedRun ? 'missing' : classify(texts[i]),
          effect: c.effect ? c.effect(cwd) : null,
          text: texts[i],
        }),
      );
    }
    return out;
  } finally {
    await model.close();
  }
}

function runClaude(
  binary: string,
  modeArgs: string[],
  o: { cwd: string; env: Record<string, string> },
): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(binary, ['-p', PROMPT, '--allowedTools', 'Agent', ...modeArgs, '--output-format', 'json'], {
      cwd: o.cwd,
      env: o.env,
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/**
 * Claude Code starts every hook and Bash command in a session of its own: one the CLI left behind is found by the
 * run's id in its environment (Linux; elsewhere the temp directory's removal is all there is).
 */
function killRunProcesses(runId: string): void {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((e) => /^\d+$/.test(e) && Number(e) !== process.pid);
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`PGX_VERIFY_RUN=${runId}`))
        process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone, or not ours
    }
  }
}
