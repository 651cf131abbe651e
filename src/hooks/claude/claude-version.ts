// Which Claude Code runs the hook, and whether pgx's permission-preserving rewrite (rewrite.ts) was verified on it.
// Claude Code 2.1.328 gives every hook process AI_AGENT=claude-code_2-1-328_harness (its Bash commands get
// …_agent); no payload field carries the version.
//
// A version is verified when CI proved it (the built-in list) or when `pgx agent verify claude` proved it on this
// machine (the verdict record under PGX_HOME, src/verify/). The record is read only for a version that is not built
// in: on the hot path that is one small file read at most, and none for a built-in version.
import {
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  closeSync,
  writeSync,
  chmodSync,
} from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { pgxHome } from '../../project/home.js';
import { rewriteCommand } from './rewrite.js';

/**
 * The versions CI proved: 2.1.328 by the permissions matrix (tests/e2e/pgx-permissions.test.ts, the pinned version),
 * 2.1.332 by the reduced matrix through pgx's real hooks (tests/e2e/pgx-permissions-newest.test.ts, 2026-12-02) and
 * by `pgx agent verify claude`. A version is added here only once CI has proved it.
 */
export const VERIFIED_CLAUDE_CODE_VERSIONS: readonly string[] = ['2.1.328', '2.1.332'];

/** "2.1.328" from AI_AGENT, or undefined when the variable is absent or not Claude Code's. */
export function claudeCodeVersion(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const m = /^claude-code_(\d+)-(\d+)-(\d+)(?:_|$)/.exec(env.AI_AGENT ?? '');
  return m ? `${m[1]}.${m[2]}.${m[3]}` : undefined;
}

/** The built-in list, or PGX_VERIFIED_CLAUDE_CODE (comma-separated versions, or "none") in its place. */
export function builtInVerified(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  return env.PGX_VERIFIED_CLAUDE_CODE !== undefined
    ? env.PGX_VERIFIED_CLAUDE_CODE.split(',').map((v) => v.trim())
    : VERIFIED_CLAUDE_CODE_VERSIONS;
}

/**
 * Verified: in the built-in list (PGX_VERIFIED_CLAUDE_CODE replaces it: how the permissions matrix is run against a
 * candidate version before it is added, and how tests reach the unverified path), or recorded as verified by
 * `pgx agent verify claude` for the rewrite pgx writes today (verdictFor).
 */
export function isVerifiedClaudeCode(
  version: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  home: string = pgxHome(env),
): boolean {
  if (version === undefined) return false;
  if (builtInVerified(env).includes(version)) return true;
  return verdictFor(home, version)?.verified === true;
}

// ---------------------------------------------------------------------------------------------------------------
// The verdict record: PGX_HOME/agent/claude-code-verdicts.json, 0600, replaced atomically.

export interface Verdict {
  verified: boolean;
  /** The rewrite the probe ran (probeShape()): a verdict holds only for the shape it proved. */
  shape: string;
  time: string;
  /** The Claude Code binary the probe ran. */
  binary: string;
  /** The cells that failed, as "rules/mode/command: why" (empty when verified). */
  failed: string[];
  cells: number;
  elapsed_ms: number;
}

/**
 * The rewrite of one fixed command, as verified: if pgx ever writes another shape, every recorded verdict stops
 * counting (the built-in list is CI's to update).
 */
export function probeShape(): string {
  return rewriteCommand('CMD', { launcher: '/L', agentId: 'A', projectDir: '/P', shell: '/bin/bash', branch: 'B' });
}

export const VERDICTS_FILE = 'claude-code-verdicts.json';

export function verdictsPath(home: string): string {
  return join(home, 'agent', VERDICTS_FILE);
}

const VERSION_RE = /^\d+\.\d+\.\d+$/;

// Built on first use: the light hook entry (entries/hook-fast.ts) imports this module for claudeCodeVersion alone, and must
// not carry zod for it.
let verdictSchema: ReturnType<typeof makeVerdictSchema> | undefined;
function makeVerdictSchema() {
  return z.object({
    verified: z.boolean(),
    shape: z.string(),
    time: z.string(),
    binary: z._default(z.string(), ''),
    failed: z._default(z.array(z.string()), []),
    cells: z._default(z.number(), 0),
    elapsed_ms: z._default(z.number(), 0),
  });
}

/** The record (a file anyone with the account can edit: validated, and a malformed entry is dropped, not trusted). */
export function readVerdicts(home: string): Record<string, Verdict> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(verdictsPath(home), 'utf8'));
  } catch {
    return {};
  }
  const versions = (raw as { versions?: unknown } | null)?.versions;
  const out: Record<string, Verdict> = {};
  if (typeof versions !== 'object' || versions === null || Array.isArray(versions)) return out;
  for (const [version, v] of Object.entries(versions as Record<string, unknown>)) {
    const r = (verdictSchema ??= makeVerdictSchema()).safeParse(v);
    if (VERSION_RE.test(version) && r.success) out[version] = r.data;
  }
  return out;
}

/** This version's verdict for the rewrite pgx writes now; undefined when there is none (or only one for another shape). */
export function verdictFor(home: string, version: string): Verdict | undefined {
  const v = readVerdicts(home)[version];
  return v && v.shape === probeShape() ? v : undefined;
}

/** Records a version's verdict (replacing its earlier one, keeping the others): written whole, then renamed. */
export function recordVerdict(home: string, version: string, verdict: Verdict): void {
  if (!VERSION_RE.test(version)) throw new Error(`not a Claude Code version: ${version}`);
  const versions = { ...readVerdicts(home), [version]: verdict };
  const file = verdictsPath(home);
  mkdirSync(join(home, 'agent'), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp-${process.pid}-${Date.now()}`;
  writeFileSync(tmp, JSON.stringify({ versions }, null, 1) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

// ---------------------------------------------------------------------------------------------------------------
// A verification in progress: one marker per version, "pid start-ms", created exclusively (single flight).

const STALE_MS = 5 * 60_000; // a verification takes under 2 minutes; a marker older than this lost its process

export function verifyingMarker(home: string, version: string): string {
  return join(home, 'agent', `claude-code-verify-${version}.running`);
}

function markerAlive(file: string): boolean {
  try {
    const [pid, at] = readFileSync(file, 'utf8').split(' ').map(Number);
    if (!pid || Date.now() - (at ?? 0) > STALE_MS) return false;
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Is a verification of this version running now (its marker is there and its process alive)? */
export function verificationRunning(home: string, version: string): boolean {
  return markerAlive(verifyingMarker(home, version));
}

/**
 * Takes the version's marker for `pid` (this process unless told): false when another live verification holds it. A
 * marker whose process is gone, or that is too old, is taken over.
 */
export function claimVerification(home: string, version: string, pid = process.pid): boolean {
  const file = verifyingMarker(home, version);
  mkdirSync(join(home, 'agent'), { recursive: true, mode: 0o700 });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, `${pid} ${Date.now()}`);
      closeSync(fd);
      return true;
    } catch {
      if (markerAlive(file)) return false;
      rmSync(file, { force: true });
    }
  }
  return false;
}

/** Hands the marker to another process (the detached verifier SessionStart starts). */
export function handOverVerification(home: string, version: string, pid: number): void {
  writeFileSync(verifyingMarker(home, version), `${pid} ${Date.now()}`, { mode: 0o600 });
}

export function releaseVerification(home: string, version: string): void {
  rmSync(verifyingMarker(home, version), { force: true });
}

// ---------------------------------------------------------------------------------------------------------------

export function unverifiedWarning(version: string | undefined, policy: 'ask' | 'rules', running = false): string {
  const head =
    `pgx: routing is verified to keep your permission rules on Claude Code ${VERIFIED_CLAUDE_CODE_VERSIONS.join(', ')}; ` +
    `this is ${version ?? 'an unknown version'}.`;
  if (running) {
    const verifying = `${head} pgx is verifying Claude Code ${version} now, on this machine (\`pgx agent verify claude\`, under 2 minutes);`;
    return policy === 'ask'
      ? `${verifying} until it has a verdict, each routed subagent command asks for approval. \`pgx agent doctor\` explains.`
      : `${verifying} meanwhile unverified_claude_code = "rules" trusts the rewrite. \`pgx agent doctor\` explains.`;
  }
  return policy === 'ask'
    ? `${head} Each routed subagent command asks for approval until pgx is verified on it (\`pgx agent verify ` +
        `claude\` verifies it on this machine, or set [agent] unverified_claude_code = "rules" in .pgx.toml to ` +
        `trust the rewrite on this version). \`pgx agent doctor\` explains.`
    : `${head} unverified_claude_code = "rules": routed commands rely on a rewrite not verified on this version. \`pgx agent doctor\` explains.`;
}
