/**
 * Shared helpers for the pgx end-to-end tests (tests/e2e/pgx-*.test.ts): the REAL Claude Code CLI (pinned, see
 * scripts/install-claude-code.sh) runs offline against the scripted fake model, in a temporary project whose
 * `.claude/settings.json` was written by the BUILT `bin/pgx.js agent install claude`, with the test server reached
 * through PGX_DATABASE_URL in claude's environment (never argv).
 *
 * Every scenario asserts on the DATABASE (pg_database, pg_tables, rows, pg_stat_activity, the registry via
 * `pgx agent ls --json`), not on logs alone. Measured figures are appended to .tmp/pgx-e2e-figures.jsonl, from which
 * scripts/e2e-claude-report.mjs writes docs/pgx/local-dev/validation/<date>-claude-code-e2e.md.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import {
  jsonOf,
  LAUNCHER,
  pgInfo,
  REPO,
  runPgx,
  runPgxAsync,
  schemaMd5,
  sql,
  templateMd5,
  type RunResult,
} from '../helpers/pgx.js';
import type { HookLogLine } from '../../src/hooks/claude/log.js';
import { templateName } from '../../src/engine/template.js';
import {
  CLAUDE_CODE_VERSION,
  claudeMissing,
  findClaudeBinary,
  startClaude,
  type ClaudeProcess,
  type ClaudeResult,
  type RunClaudeOptions,
} from './claude.js';
import { startFakeModel, type FakeModel, type FakeScript } from './fake-model.js';

export { CLAUDE_CODE_VERSION };

export const claudeBin = findClaudeBinary();
export function warnIfSkipped(): void {
  if (!claudeBin) console.warn(`SKIPPED: ${claudeMissing()}`);
}

/** The host label pgx uses in branch names: fixed, so the test's own `pgx` calls and the hooks agree. */
export const PGX_HOST = 'e2e';

/**
 * --allowedTools for runs where the USER allows psql (and nothing else in Bash): the routed commands run because the
 * user's own rule allows them, through pgx's narrow rules (docs/pgx/local-dev/permissions.md).
 */
export const PSQL_ALLOWED = 'Agent,Bash(psql:*)';

const roots: string[] = [];
const made: { cwd: string; env: NodeJS.ProcessEnv }[] = [];
export function cleanupRoots(): void {
  // The file's branches go with it (retiring ones would wait out their grace on the shared test server, and the next
  // files' server-wide gc would drop them: slow, and noise in what those files assert).
  for (const p of made.splice(0)) runPgx(['agent', 'down', '--project', '--now', '--yes'], { ...p, timeout: 120_000 });
  // PGX_E2E_KEEP=1 keeps the temp dirs (transcripts, hook logs, debug files) for inspection.
  if (process.env.PGX_E2E_KEEP) console.warn(`kept e2e dirs: ${roots.join(' ')}`);
  else for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------------------------
// The source database

export interface Source {
  name: string;
  /** schema-only pg_dump md5 taken right after creation: the baseline for the source AND the template. */
  baselineMd5: string;
}

/** A source database with a table `items` (3 rows) that branches are cloned from. */
export async function makeSource(): Promise<Source> {
  const name = `src_e2e_${Math.random().toString(36).slice(2, 10)}`;
  await sql(`CREATE DATABASE ${name}`);
  await sql(
    `CREATE TABLE items (id int PRIMARY KEY, note text NOT NULL); INSERT INTO items VALUES (1, 'a'), (2, 'b'), (3, 'c');`,
    [],
    name,
  );
  return { name, baselineMd5: schemaMd5(name) };
}

export { templateMd5 };

// ---------------------------------------------------------------------------------------------------------------
// Projects

export interface E2eProject {
  root: string;
  /** The project directory (claude's cwd), holding .pgx.toml and .claude/settings.json. */
  cwd: string;
  /** claude's HOME: fresh and empty. */
  home: string;
  /** PGX_HOME (hook log, passfiles). */
  pgxHome: string;
  name: string;
  source: Source;
  template: string;
  /** Environment for the test's own `pgx` calls. */
  env: NodeJS.ProcessEnv;
  /** pgx's part of claude's environment (merged into the clean env of claude.ts). */
  claudeEnv: Record<string, string>;
  /** The settings.json that `pgx agent install claude` wrote (portable: hooks that find pgx on PATH). */
  settings: { hooks: Record<string, unknown>; permissions?: { allow?: string[] } };
  /** The settings.local.json it wrote: this machine's permission rules (absent with --no-rules). */
  localSettings?: { permissions?: { allow?: string[] } };
  /** `pgx agent install claude --json`'s result, and what it said on stderr (progress). */
  install: Record<string, unknown>;
  installStderr: string;
}

/**
 * Claude Code 2.1.328 DROPS project-scoped `permissions.allow` entries (.claude/settings.json) while the workspace is
 * not trusted ("Dropped 1 project-scoped permissions.allow entry — workspace not yet trusted" in the debug log); hooks
 * still run. A user who started Claude Code interactively in the project once has accepted the trust dialog, which
 * Claude Code records as `projects[<dir>].hasTrustDialogAccepted` in ~/.claude.json: this writes that record.
 */
export function trustWorkspace(p: Pick<E2eProject, 'home' | 'cwd'>): void {
  writeFileSync(
    join(p.home, '.claude.json'),
    JSON.stringify({ projects: { [p.cwd]: { hasTrustDialogAccepted: true } } }, null, 2),
  );
}

/**
 * `env`: more environment for the project's own `pgx` calls AND claude's (e.g. a PATH with a user's `claude` on it,
 * PGX_VERIFIED_CLAUDE_CODE); `installArgs`: more flags for `pgx agent install claude`, whose JSON result is kept.
 */
export function makeE2eProject(opts: {
  source: Source;
  toml?: string;
  allowRule?: boolean;
  trusted?: boolean;
  env?: Record<string, string>;
  installArgs?: string[];
  beforeInstall?: (cwd: string) => void;
}): E2eProject {
  const root = mkdtempSync(join(tmpdir(), 'pgx-e2e-'));
  roots.push(root);
  const cwd = join(root, 'project');
  const home = join(root, 'home');
  const pgxHome = join(root, 'pgx-home');
  for (const d of [cwd, home, pgxHome]) mkdirSync(d);
  const name = `e2e${Math.random().toString(36).slice(2, 10)}`;
  writeFileSync(
    join(cwd, '.pgx.toml'),
    `[project]\nname = "${name}"\nsource = "${opts.source.name}"\n${opts.toml ?? ''}`,
  );
  // The pool: tests/blackbox/pool.test.ts. The broker is on, as users have it; PGX_E2E_BROKER=0 runs without it (the
  // fan-out comparison in validation/2026-12-01-broker.md).
  // pgx on PATH as an npm install puts it (a bin/ symlink): the project-scope hooks find it there. node's own
  // directory too, as claude.ts gives every run. A test's own PATH (a user's claude) comes after pgx's bin.
  const bin = join(root, 'bin');
  mkdirSync(bin);
  symlinkSync(LAUNCHER, join(bin, 'pgx'));
  const PATH = [
    bin,
    ...(opts.env?.PATH
      ? [opts.env.PATH]
      : [dirname(process.execPath), process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin']),
  ].join(':');
  const base: Record<string, string> = {
    PGX_DATABASE_URL: pgInfo().url,
    PGX_HOME: pgxHome,
    PGX_HOST,
    PGX_POOL: '0',
    ...(process.env.PGX_E2E_BROKER === '0' ? { PGX_BROKER: '0' } : {}),
    ...opts.env,
    PATH,
  };
  const env: NodeJS.ProcessEnv = { HOME: home, ...base };
  // pgx's narrow permission rules are written by default; allowRule: false installs with --no-rules.
  // Long enough for the verification install runs on an unverified Claude Code on PATH (under 2 minutes).
  opts.beforeInstall?.(cwd); // e.g. `git init`: the install keeps settings.local.json out of a repository
  const install = runPgx(
    [
      'agent',
      'install',
      'claude',
      ...(opts.allowRule === false ? ['--no-rules'] : []),
      ...(opts.installArgs ?? []),
      '--json',
    ],
    { cwd, env, timeout: 240_000 },
  );
  if (install.status !== 0) throw new Error(`pgx agent install claude failed: ${install.stdout}${install.stderr}`);
  made.push({ cwd, env });
  const installResult = JSON.parse(install.stdout) as Record<string, unknown>;
  const settings = JSON.parse(readFileSync(join(cwd, '.claude', 'settings.json'), 'utf8'));
  const localFile = join(cwd, '.claude', 'settings.local.json');
  const localSettings = existsSync(localFile) ? JSON.parse(readFileSync(localFile, 'utf8')) : undefined;
  if (opts.trusted !== false) trustWorkspace({ home, cwd });
  return {
    root,
    cwd,
    home,
    pgxHome,
    name,
    source: opts.source,
    template: templateName(name, opts.source.name),
    env,
    claudeEnv: base,
    settings,
    localSettings,
    install: installResult,
    installStderr: install.stderr,
  };
}

export function pgx(p: E2eProject, args: string[]): RunResult {
  return runPgx(args, { cwd: p.cwd, env: p.env });
}

export function pgxJson<T = any>(p: E2eProject, args: string[]): T {
  const r = pgx(p, [...args, '--json']);
  if (r.status !== 0) throw new Error(`pgx ${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return jsonOf<T>(r);
}

export async function pgxJsonAsync<T = any>(p: E2eProject, args: string[]): Promise<T> {
  const r = await runPgxAsync([...args, '--json'], { cwd: p.cwd, env: p.env });
  if (r.status !== 0) throw new Error(`pgx ${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return jsonOf<T>(r);
}

export interface BranchRow {
  name: string;
  kind: 'session' | 'subagent' | 'exec';
  session_id: string | null;
  agent_id: string | null;
  state: 'creating' | 'active' | 'retiring';
  exists: boolean | null;
  deadline_kind: string;
}

export function branches(p: E2eProject): BranchRow[] {
  return pgxJson<{ branches: BranchRow[] }>(p, ['agent', 'ls']).branches;
}

export type { HookLogLine };

export function hookLog(p: E2eProject): HookLogLine[] {
  const f = join(p.pgxHome, 'agent', 'hooks.log');
  if (!existsSync(f)) return [];
  return readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as HookLogLine);
}

// ---------------------------------------------------------------------------------------------------------------
// Database probes (the test's own admin connection)

export async function dbRow(name: string): Promise<{ datallowconn: boolean; datistemplate: boolean } | undefined> {
  return (await sql(`SELECT datallowconn, datistemplate FROM pg_database WHERE datname = $1`, [name]))[0];
}

export async function publicTables(database: string): Promise<string[]> {
  return (
    await sql<{ t: string }>(
      `SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
      [],
      database,
    )
  ).map((r) => r.t);
}

export async function serverVersion(): Promise<string> {
  return (await sql<{ v: string }>(`SELECT current_setting('server_version') AS v`))[0]!.v;
}

/** The source and the template still have the baseline schema (and the source no pgx settings). */
export async function pristine(
  p: E2eProject,
): Promise<{ source: string; template: string; baseline: string; sourceSettings: string[] }> {
  const sourceSettings = ((
    await sql(
      `SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase WHERE d.datname = $1`,
      [p.source.name],
    )
  )[0]?.setconfig ?? []) as string[];
  return {
    source: schemaMd5(p.source.name),
    template: await templateMd5(p.template),
    baseline: p.source.baselineMd5,
    sourceSettings,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Running claude

export interface Run {
  fake: FakeModel;
  out: ClaudeResult;
  sessionId: string;
  /** claude's --debug-file (hook durations as Claude Code measured them, permission decisions). */
  debugFile: string;
}

export interface RunOpts {
  sessionId?: string;
  resume?: string;
  /** Extra environment for claude (decoys). */
  env?: Record<string, string>;
  allowedTools?: string;
  timeoutMs?: number;
  prompt?: string;
  permissionMode?: RunClaudeOptions['permissionMode'];
  /** Another Claude Code binary than this run's (claudeBin). */
  bin?: string;
  /** More CLI arguments (e.g. `--worktree NAME`). */
  extraArgs?: string[];
  /** MCP servers the model waits for (Claude Code's debug log says "connected") before its first answer. */
  waitMcp?: string[];
}

function claudeOptions(p: E2eProject, fake: FakeModel, o: RunOpts & { debugFile: string }): RunClaudeOptions {
  return {
    bin: o.bin ?? (claudeBin as string),
    cwd: p.cwd,
    home: p.home,
    modelUrl: fake.url,
    prompt: o.prompt ?? 'Run the e2e subagents.',
    sessionId: o.resume ? undefined : o.sessionId,
    resume: o.resume,
    allowedTools: o.allowedTools,
    timeoutMs: o.timeoutMs ?? 90_000,
    debugFile: o.debugFile,
    permissionMode: o.permissionMode,
    extraArgs: o.extraArgs,
    env: { ...p.claudeEnv, ...o.env },
  };
}

/** Runs claude to completion against a fresh fake model scripted with `script`. */
export async function runScenario(p: E2eProject, script: FakeScript, o: RunOpts = {}): Promise<Run> {
  const sessionId = o.resume ?? o.sessionId ?? randomUUID();
  const debugFile = join(p.root, `debug-${randomUUID().slice(0, 8)}.log`);
  const names = o.waitMcp;
  const fake = await startFakeModel(
    names?.length ? { ...script, beforeFirst: () => mcpConnected(debugFile, names) } : script,
  );
  try {
    const proc = startClaude(claudeOptions(p, fake, { ...o, sessionId, debugFile }));
    const out = await proc.done;
    return { fake, out, sessionId, debugFile };
  } finally {
    await fake.close();
  }
}

/** Starts claude (detached: its own process group) and returns at once; the caller kills it. */
export async function startScenario(
  p: E2eProject,
  script: FakeScript,
  o: RunOpts = {},
): Promise<{ fake: FakeModel; proc: ClaudeProcess; sessionId: string; debugFile: string }> {
  const sessionId = o.sessionId ?? randomUUID();
  const fake = await startFakeModel(script);
  const debugFile = join(p.root, `debug-${randomUUID().slice(0, 8)}.log`);
  const proc = startClaude({ ...claudeOptions(p, fake, { ...o, sessionId, debugFile }), detached: true });
  return { fake, proc, sessionId, debugFile };
}

/** Until Claude Code's debug log says each server connected (or failed: then the run shows why), at most 60 s. */
export async function mcpConnected(debugFile: string, names: string[]): Promise<void> {
  const done = (text: string, n: string) =>
    text.includes(`MCP server "${n}": Successfully connected`) || text.includes(`MCP server "${n}": Connection failed`);
  await poll(
    async () => {
      const text = existsSync(debugFile) ? readFileSync(debugFile, 'utf8') : '';
      return names.every((n) => done(text, n));
    },
    60_000,
    `MCP servers ${names.join(', ')} to connect`,
    100,
  );
}

export function describeRun(r: { fake: FakeModel; out?: ClaudeResult }): string {
  return JSON.stringify(
    {
      code: r.out?.code,
      stderr: r.out?.stderr.slice(0, 2000),
      stdout: r.out?.stdout.slice(0, 1000),
      errors: r.fake.errors,
      log: r.fake.log.slice(0, 60),
      toolResults: Object.fromEntries(r.fake.toolResults),
    },
    null,
    1,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Figures

export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export function latency(values: number[]): { n: number; p50: number; p95: number; max: number } {
  return {
    n: values.length,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    max: values.length ? Math.max(...values) : NaN,
  };
}

/** elapsed_ms of every hook-log line of one event (e.g. 'subagent-start'). */
export function hookLatency(p: E2eProject, event: string): ReturnType<typeof latency> {
  return latency(
    hookLog(p)
      .filter((l) => l.event === event)
      .map((l) => l.elapsed_ms),
  );
}

/**
 * Hook durations as Claude Code measured them (spawn to exit: includes node's start-up, which the hook log's
 * elapsed_ms does not), from the debug file's "Hooks: <Event>[:<matcher>] [<command>] finished with status 0 (Nms)".
 */
export function ccHookLatency(debugFile: string, event: string): ReturnType<typeof latency> {
  if (!existsSync(debugFile)) return latency([]);
  // Lazy up to the first "] finished": pgx's own PreToolUse command has brackets in it (`[ $? = 1 ]`).
  const re = /Hooks: ([A-Za-z]+)(?::[^ ]+)? \[.*?\] finished with status \d+ \((\d+)ms\)/g;
  const values: number[] = [];
  for (const m of readFileSync(debugFile, 'utf8').matchAll(re)) if (m[1] === event) values.push(Number(m[2]));
  return latency(values);
}

export const FIGURES_FILE = join(REPO, '.tmp', 'pgx-e2e-figures.jsonl');

/** Appends one scenario's measured figures (read by scripts/e2e-claude-report.mjs). */
export function recordFigures(scenario: string, figures: Record<string, unknown>): void {
  mkdirSync(join(REPO, '.tmp'), { recursive: true });
  appendFileSync(
    FIGURES_FILE,
    JSON.stringify({ time: new Date().toISOString(), claude_code: CLAUDE_CODE_VERSION, scenario, ...figures }) + '\n',
  );
  console.log(`[pgx-e2e] ${scenario}: ${JSON.stringify(figures)}`);
}

export { sleep } from '../helpers/poll.js';
import { sleep } from '../helpers/poll.js';

/** Polls `fn` every `every` ms until it returns a truthy value; throws after `timeoutMs`. */
export async function poll<T>(fn: () => Promise<T>, timeoutMs: number, what: string, every = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(every);
  }
}
