/**
 * Spawning the real Claude Code CLI (installed by scripts/install-claude-code.sh) for
 * end-to-end tests, pointed at the fake model of ./fake-model.ts.
 *
 * Observed with 2.1.328 in `-p` mode:
 * - `--session-id <uuid>` works: every hook payload carries that session_id and the transcript
 *   is written to $HOME/.claude/projects/<cwd-slug>/<uuid>.jsonl. Reusing a uuid that already has
 *   a transcript is refused ("Session ID … is already in use", exit 1).
 * - `--resume <uuid>` works in `-p` mode: the earlier conversation is sent to the model again
 *   followed by the new prompt, SessionStart fires with source:"resume", every event keeps the
 *   same session_id. `--resume` of an unknown uuid fails ("No conversation found with session
 *   ID: …", exit 1; only SessionEnd fires). `--resume X --fork-session` (optionally with
 *   `--session-id NEW`) starts a new session id with SessionStart source:"fork".
 * - Every Bash tool command AND every hook command runs in a session of its own (the CLI starts
 *   a shell with setsid; pid = pgid = sid): killing the CLI's process group does NOT kill them,
 *   they are orphaned and re-parented to init. Hence PGX_E2E_RUN_ID / findRunProcesses() to
 *   find and clean them up.
 * All of this is asserted by harness-smoke.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { claudeOnPath, claudeVersionOf } from '../../src/verify/find-claude.js';
import { withPsql } from '../helpers/psql-stand-in.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const INSTALL_SCRIPT = readFileSync(join(HERE, '..', '..', 'scripts', 'install-claude-code.sh'), 'utf8');
const pinnedIn = (name: string) => new RegExp(`^${name}="([0-9.]+)"$`, 'm').exec(INSTALL_SCRIPT)![1]!;

/** The version scripts/install-claude-code.sh pins: CI's permissions matrix and e2e suite. */
export const PINNED_CLAUDE_CODE = pinnedIn('PINNED');
/** The newest release CI checks too (the reduced matrix, the install-verify test): NEWEST in the same script, its one place. */
export const NEWEST_CLAUDE_CODE = pinnedIn('NEWEST');

/**
 * The version this e2e run drives: the pinned one, or PGX_E2E_CLAUDE_CODE (a version, or "newest") to run the existing
 * suite against another release installed by `scripts/install-claude-code.sh <version>`.
 */
export const CLAUDE_CODE_VERSION =
  process.env.PGX_E2E_CLAUDE_CODE === 'newest'
    ? NEWEST_CLAUDE_CODE
    : process.env.PGX_E2E_CLAUDE_CODE || PINNED_CLAUDE_CODE;

/** Where scripts/install-claude-code.sh installs a version (git-ignored): tests/e2e/.cc for the pinned one. */
export function claudeInstallPrefix(version: string): string {
  return join(HERE, version === PINNED_CLAUDE_CODE ? '.cc' : `.cc-${version}`);
}

/** Where this run's version is installed. */
export const CLAUDE_INSTALL_PREFIX = claudeInstallPrefix(CLAUDE_CODE_VERSION);

/**
 * Path of the Claude Code binary this run drives, or undefined when there is none.
 * `PGX_CLAUDE_BIN` overrides (it must point at an existing file). Otherwise the platform package installed under the
 * version's prefix by scripts/install-claude-code.sh: `@anthropic-ai/claude-code-<platform>/claude` (called directly
 * because npm may skip the wrapper's postinstall that copies it to bin/claude.exe). Failing that, the `claude` on PATH
 * when `claude --version` is exactly that version: the suite's figures and matrices are pinned to a version, so a
 * PATH `claude` of another version is never used (the skip message says which one was found; decision 420).
 */
export function findClaudeBinary(version: string = CLAUDE_CODE_VERSION): string | undefined {
  const override = version === CLAUDE_CODE_VERSION ? process.env.PGX_CLAUDE_BIN : undefined;
  if (override) return existsSync(override) ? resolve(override) : undefined;
  return installedClaude(version) ?? pathClaude(version).bin;
}

function installedClaude(version: string): string | undefined {
  const scope = join(claudeInstallPrefix(version), 'node_modules', '@anthropic-ai');
  let entries: string[];
  try {
    entries = readdirSync(scope);
  } catch {
    return undefined;
  }
  // Prefer the package for this platform/arch, then any other (e.g. a -musl variant).
  const preferred = `claude-code-${process.platform}-${process.arch}`;
  const candidates = entries
    .filter((e) => e.startsWith('claude-code-'))
    .sort((a, b) => Number(b === preferred) - Number(a === preferred));
  for (const pkg of candidates) {
    const bin = join(scope, pkg, 'claude');
    try {
      if (statSync(bin).isFile()) return bin;
    } catch {
      // not this one
    }
  }
  return undefined;
}

const onPath = new Map<string, { bin?: string; found?: string; version?: string }>();
/** The `claude` on PATH if it is `version` (asked once per version and process); else what was found, for the message. */
function pathClaude(version: string): { bin?: string; found?: string; version?: string } {
  let r = onPath.get(version);
  if (!r) {
    const found = claudeOnPath();
    const v = found ? claudeVersionOf(found) : undefined;
    r = { bin: v === version ? found : undefined, found, version: v };
    onPath.set(version, r);
  }
  return r;
}

/** Why the e2e files of `version` skip (no binary), saying how to make them run. */
export function claudeMissing(version: string = CLAUDE_CODE_VERSION): string {
  if (version === CLAUDE_CODE_VERSION && process.env.PGX_CLAUDE_BIN)
    return `PGX_CLAUDE_BIN=${process.env.PGX_CLAUDE_BIN} is not a file`;
  const p = pathClaude(version);
  const path = p.found
    ? `the \`claude\` on PATH (${p.found}) is ${p.version ? `version ${p.version}` : 'of no version it would say'}, not ${version}`
    : 'no `claude` on PATH';
  const arg = version === PINNED_CLAUDE_CODE ? '' : version === NEWEST_CLAUDE_CODE ? ' newest' : ` ${version}`;
  return `Claude Code ${version} is not installed for the tests (${claudeInstallPrefix(version)}), and ${path}: run \`scripts/install-claude-code.sh${arg}\` (about 360 MB, from the npm registry), or point PGX_CLAUDE_BIN at a Claude Code ${version} binary`;
}

export interface RunClaudeOptions {
  /** The claude binary (see findClaudeBinary). */
  bin: string;
  /** Working directory: the project; hooks are read from `<cwd>/.claude/settings.json`. */
  cwd: string;
  /** A fresh, empty HOME: keeps the user's ~/.claude (settings, hooks, sessions) out of the run. */
  home: string;
  /** Base URL of the fake model (FakeModel.url). */
  modelUrl: string;
  /** The `-p` prompt. */
  prompt: string;
  /** Extra environment, applied last (can override the defaults below). */
  env?: Record<string, string>;
  /** `--session-id <uuid>` */
  sessionId?: string;
  /** `--resume <uuid>` */
  resume?: string;
  /** `--plugin-dir <dir>` */
  pluginDir?: string;
  /** Kill the process (its whole group when detached) after this long. Default 60 s. */
  timeoutMs?: number;
  /** `--debug-file <path>`: logs hook decisions, e.g. "modified tool input keys". */
  debugFile?: string;
  /** Start in a new process group/session (setsid), so kill() signals the whole group. */
  detached?: boolean;
  /** Extra CLI arguments, appended last. */
  extraArgs?: string[];
  /** `--allowedTools` value. Default "Bash,Agent" (every Bash command allowed, whatever a hook rewrites it to). */
  allowedTools?: string;
  /** `--permission-mode` (default acceptEdits), or 'bypass' for `--dangerously-skip-permissions` (IS_SANDBOX=1 as root). */
  permissionMode?: 'default' | 'acceptEdits' | 'bypass';
}

export interface ClaudeResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  pid: number;
  /** The run's PGX_E2E_RUN_ID (see findRunProcesses). */
  runId: string;
  /** True when timeoutMs expired and the harness killed the process. */
  timedOut: boolean;
  durationMs: number;
}

export interface ClaudeProcess {
  pid: number;
  /** Value of PGX_E2E_RUN_ID in the environment of the CLI and of everything it starts. */
  runId: string;
  child: ChildProcess;
  /** Resolves when the process has exited and its stdout/stderr are closed. */
  done: Promise<ClaudeResult>;
  /**
   * Signal the process. With `detached: true` the whole process group gets it
   * (`process.kill(-pid, signal)`), as when a terminal dies. NB: that does not reach hook
   * commands nor Bash tool shells, which the CLI starts in sessions of their own (see header);
   * use killAll() for those. Without detached only the CLI process itself is signalled.
   */
  kill(signal?: NodeJS.Signals): void;
  /**
   * kill() plus every process still carrying this run's PGX_E2E_RUN_ID (Linux): also reaches
   * the hook commands and Bash tool shells, which live in sessions of their own and survive
   * kill(). Returns the pids found by the scan.
   */
  killAll(signal?: NodeJS.Signals): number[];
}

/** Name of the env var that tags every process of one run (the CLI passes its env down). */
export const RUN_ID_ENV = 'PGX_E2E_RUN_ID';

/**
 * Pids of live processes whose environment holds `PGX_E2E_RUN_ID=<runId>` (Linux only: reads
 * /proc/<pid>/environ; [] elsewhere). Needed because Claude Code 2.1.328 starts every Bash tool
 * command and every hook command with setsid (its own session and process group): killing the
 * CLI's group leaves them running, re-parented to init, and nothing else links them to the run.
 * Zombies are skipped.
 */
export function findRunProcesses(runId: string): number[] {
  const needle = `${RUN_ID_ENV}=${runId}`;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${e}/environ`, 'latin1');
      if (!environ.split('\0').includes(needle)) continue;
      const stat = readFileSync(`/proc/${e}/stat`, 'latin1');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
      pids.push(Number(e));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

/** Signal every process of a run (see findRunProcesses); returns the pids signalled. */
export function killRunProcesses(runId: string, signal: NodeJS.Signals = 'SIGKILL'): number[] {
  const pids = findRunProcesses(runId);
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
  return pids;
}

/** Build the argv for one run (exported for tests of the harness itself). */
export function claudeArgs(opts: RunClaudeOptions): string[] {
  const mode =
    opts.permissionMode === 'bypass'
      ? ['--dangerously-skip-permissions']
      : ['--permission-mode', opts.permissionMode ?? 'acceptEdits'];
  const args = [
    '-p',
    opts.prompt,
    '--allowedTools',
    opts.allowedTools ?? 'Bash,Agent',
    ...mode,
    '--output-format',
    'json',
  ];
  if (opts.sessionId) args.push('--session-id', opts.sessionId);
  if (opts.resume) args.push('--resume', opts.resume);
  if (opts.pluginDir) args.push('--plugin-dir', opts.pluginDir);
  if (opts.debugFile) args.push('--debug-file', opts.debugFile);
  if (opts.extraArgs) args.push(...opts.extraArgs);
  return args;
}

/**
 * The clean environment of a run, like `env -i`: nothing from the test runner's environment
 * leaks in (no real ANTHROPIC_* keys, no DATABASE_URL, no CLAUDECODE from an outer session)
 * except PATH, which gets node's own directory first so `node` hook scripts resolve.
 */
export function claudeEnv(opts: RunClaudeOptions, runId: string = randomUUID()): Record<string, string> {
  const tmp = join(opts.home, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const path = [dirname(process.execPath), process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(delimiter);
  return {
    HOME: opts.home,
    PATH: path,
    ANTHROPIC_BASE_URL: opts.modelUrl,
    ANTHROPIC_API_KEY: 'fake',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    // Else the CLI writes under /tmp/claude-<uid>/, shared between runs.
    CLAUDE_CODE_TMPDIR: tmp,
    // The test file's temp dir (tests/helpers/file-hygiene.ts), for pgx's hooks: their broker's socket directory
    // (<tmp>/pgx-<uid>) goes with the file, and the broker is stopped when it ends.
    TMPDIR: tmpdir(),
    [RUN_ID_ENV]: runId,
    // Bypass mode is refused as root unless the CLI is told it runs in a sandbox.
    ...(opts.permissionMode === 'bypass' ? { IS_SANDBOX: '1' } : {}),
    // How a candidate version is run through the suite before CI proves it (hooks/claude/claude-version.ts).
    ...(process.env.PGX_VERIFIED_CLAUDE_CODE !== undefined
      ? { PGX_VERIFIED_CLAUDE_CODE: process.env.PGX_VERIFIED_CLAUDE_CODE }
      : {}),
    ...opts.env,
  };
}

/**
 * Start the CLI and return a handle right away (use this for the "terminal dies" scenario:
 * start with `detached: true`, wait for the state you want, then `kill('SIGKILL')`).
 */
export function startClaude(opts: RunClaudeOptions): ClaudeProcess {
  const started = Date.now();
  const runId = randomUUID();
  const child = spawn(opts.bin, claudeArgs(opts), {
    cwd: opts.cwd,
    env: withPsql(claudeEnv(opts, runId)), // the agent's psql: the stand-in where the machine has none
    // stdin must not be a pipe: in -p mode the CLI would wait to read (and append) piped stdin.
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });
  // pid is undefined when spawn failed (ENOENT/EACCES); the 'error' event below carries why.
  const pid = child.pid ?? -1;
  const detached = opts.detached ?? false;

  const kill = (signal: NodeJS.Signals = 'SIGKILL'): void => {
    try {
      if (detached && pid > 0) process.kill(-pid, signal);
      else child.kill(signal);
    } catch {
      // already gone
    }
  };

  const killAll = (signal: NodeJS.Signals = 'SIGKILL'): number[] => {
    kill(signal);
    return killRunProcesses(runId, signal);
  };

  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killAll('SIGKILL');
  }, opts.timeoutMs ?? 60_000);

  const done = new Promise<ClaudeResult>((resolveDone) => {
    let spawnError: string | undefined;
    child.once('error', (err) => {
      spawnError = String(err);
    });
    // Resolve on 'close' (stdout/stderr drained), but a Bash/hook grandchild that outlives the
    // CLI (e.g. after the CLI alone was killed) would hold the pipes open: after 'exit', give
    // the pipes a short grace period and then stop waiting for them.
    child.once('exit', () => {
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, 2_000).unref();
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolveDone({
        code,
        signal,
        stdout,
        stderr: spawnError ? `${stderr}${spawnError}\n` : stderr,
        pid,
        runId,
        timedOut,
        durationMs: Date.now() - started,
      });
    });
  });

  return { pid, runId, child, done, kill, killAll };
}

/** Run the CLI to completion (or until timeoutMs) and collect its output. */
export function runClaude(opts: RunClaudeOptions): Promise<ClaudeResult> {
  return startClaude(opts).done;
}
