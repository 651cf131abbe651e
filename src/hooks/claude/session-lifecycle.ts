// A session's two ends. SessionStart: the Claude Code version recorded (and verified in the background when unknown),
// the pool and the broker started, the session's own branch ensured and its libpq variables written to the session's
// env file. SessionEnd: the branches retired, and the passfiles and the handoff inbox removed whatever the server says.
import { noteRetired } from '../../mcp/retire-notices.js';
import { appendFileSync, existsSync, rmSync } from 'node:fs';
import type { Config } from '../../project/config.js';
import { withEngine } from '../../engine/api.js';
import { hashBranchName, shortBranchName } from '../../engine/identity.js';
import { brokerAddress, startBroker } from '../../broker/client.js';
import { socketDirProblem } from '../../broker/protocol.js';
import type { ConnParams } from '../../server/conn-params.js';
import {
  LIBPQ_TARGETING_VARS,
  libpqEnv,
  passfilePath,
  writePassfile,
  writeServerUrlFile,
} from '../../server/libpq-env.js';
import { shellQuote } from '../../lib/shell.js';
import * as P from './payloads.js';
import { startPoolFill } from './pool-fill.js';
import { isVerifiedClaudeCode, unverifiedWarning } from './claude-version.js';
import { dropSessionRecord, recordSessionClaudeCode } from './session-claude-code.js';
import { startVerificationIfNeeded } from './verification-start.js';
import { dropHandoffs } from './handoff-inbox.js';
import { sessionTarget, type Handler } from './hook-handler.js';

export const sessionStart: Handler<typeof P.sessionStartSchema> = {
  schema: P.sessionStartSchema,
  async run(p, h) {
    // For this session's HTTP hooks, whose requests don't say (session-claude-code.ts); no version: no record, so
    // they ask.
    if (h.claudeCode) recordSessionClaudeCode(h.config.home, p.session_id, h.claudeCode);
    else dropSessionRecord(h.config.home, p.session_id);
    // Said once per session, where the user sees it: on an unverified Claude Code, routed commands ask (or, by the
    // user's choice, rely on an unverified rewrite).
    // An unverified version with no verdict yet: `pgx agent verify claude` starts in the background (once: a marker
    // per version), and the session asks as before until it records a verdict.
    const verified = isVerifiedClaudeCode(h.claudeCode, h.env, h.config.home);
    const running =
      !verified &&
      h.claudeCode !== undefined &&
      startVerificationIfNeeded(h.config.home, h.claudeCode, h.launcher, h.env) !== 'none';
    const versionNote: { systemMessage?: string } = verified
      ? {}
      : { systemMessage: unverifiedWarning(h.claudeCode, h.config.unverifiedClaudeCode, running) };
    startPoolFill(h.config, h.env); // warm the pool (and the template) before the first subagent asks, off this hook's path
    const brokerWarning = startBrokerIfNone(h.launcher, h.env); // the session's later hooks and routed commands hand their work to it
    if (brokerWarning) versionNote.systemMessage = [versionNote.systemMessage, brokerWarning].filter(Boolean).join(' ');
    const verifyLine = running ? ` ${verifyingContext(h.claudeCode!)}` : '';
    if (!h.config.sessionBranch) {
      const output = running
        ? {
            ...versionNote,
            hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: verifyingContext(h.claudeCode!) },
          }
        : 'systemMessage' in versionNote
          ? versionNote
          : undefined;
      return { output, outcome: `skipped:session_branch=false${running ? ':verifying' : ''}` };
    }
    const r = await withEngine(h.config, (e) => e.ensure(sessionTarget(p)), h.engine);
    if (h.envFile)
      writeEnvFile(h.envFile, r.conn, h.config.home, {
        branchRole: !!r.record.role,
        serverUrl: h.env.PGX_DATABASE_URL,
      });
    return {
      output: {
        ...versionNote,
        hookSpecificOutput: {
          hookEventName: 'SessionStart',
          additionalContext:
            `pgx: this session's Bash commands use its own PostgreSQL database branch "${r.branch}"` +
            `${h.config.source ? `, a snapshot of "${h.config.source}"` : ''}; ` +
            `subagents get branches of their own. libpq variables (PGDATABASE etc.) are already set.${verifyLine}`,
        },
      },
      outcome: `ok:${r.method}${running ? ':verifying' : ''}`,
      branch: r.branch,
    };
  },
  onError(message) {
    return {
      output: {
        systemMessage:
          `pgx: this session's database branch could not be prepared, so Bash commands use whatever database they ` +
          `did before. ${message} Run \`pgx agent doctor\`.`,
      },
      outcome: 'error',
    };
  },
};

export const sessionEnd: Handler<typeof P.sessionEndSchema> = {
  schema: P.sessionEndSchema,
  async run(p, h) {
    try {
      const r = await withEngine(h.config, (e) => e.endSession(p.session_id), h.engine);
      for (const b of r.branches) if (b.action !== 'failed') noteRetired(h.config.home, b.name); // pgx's MCP fronts
      return { outcome: `retired:${r.retired}${r.failed ? `:failed=${r.failed}` : ''}`, branch: r.session_branch };
    } finally {
      // The passfile holds the password: it goes whatever the branch's state (already retired or dropped by
      // `down --session` or gc, so no longer active) and even when the server cannot be reached. Its name follows
      // from the session's identity alone (the readable name, or the hash name a collision falls back to).
      removeSessionPassfiles(h.config, p.session_id);
      dropHandoffs(h.config.home, p.session_id);
    }
  },
  onError: () => ({ outcome: 'error' }),
};

/** One line for the model: why subagents' commands may ask for approval for a minute or two. */
function verifyingContext(version: string): string {
  return (
    `pgx is verifying Claude Code ${version} on this machine (\`pgx agent verify claude\`, in the background); ` +
    `until it records a verdict, each routed subagent Bash command asks for approval.`
  );
}

/**
 * Spawns this user's broker (detached) unless its socket is there; a stale socket is the next hook's to fix. Returns
 * the warning for the user when its socket directory is not private (decision 443): hooks then work in their own
 * processes, and the user is told why, once per session.
 */
function startBrokerIfNone(launcher: string, env: NodeJS.ProcessEnv): string | undefined {
  const addr = brokerAddress(env, launcher, true);
  if (addr && !existsSync(addr.path)) void startBroker(addr, launcher, env);
  const problem = addr ? undefined : socketDirProblem(env);
  if (!problem) return undefined;
  const whose =
    problem.owner !== undefined && problem.owner !== process.getuid?.()
      ? `it belongs to uid ${problem.owner}, not you`
      : 'it is a link or open to others';
  return (
    `pgx WARNING: ${problem.dir}, where pgx's broker keeps its socket, is not a private directory of yours ` +
    `(${whose}), so pgx does not use it: every hook and routed command does its work in its own process (slower, ` +
    `still isolated). Run \`pgx agent doctor\`.`
  );
}

function removeSessionPassfiles(config: Config, sessionId: string): void {
  const id = { project: config.project, host: config.host, sessionId };
  for (const name of [shortBranchName(id), hashBranchName(id)])
    if (name) rmSync(passfilePath(config.home, name), { force: true });
}

/** Exports for the session's later Bash commands. The password goes into a 0600 passfile, never into the env file. */
function writeEnvFile(
  envFile: string,
  conn: ConnParams,
  home: string,
  o: { branchRole: boolean; serverUrl?: string },
): void {
  // The same variables exec gives a routed command (libpqEnv), minus the password, which goes to a passfile.
  const vars = libpqEnv({}, { ...conn, password: undefined });
  // With a branch role, the admin URL Claude Code may have inherited (PGX_DATABASE_URL, password included) is taken
  // out of the session's Bash environment too: the shells get a 0600 file naming it instead, which the routed
  // `pgx agent exec` (itself run by those shells) reads and never passes on (libpqEnv).
  const urlFile = o.branchRole && o.serverUrl ? writeServerUrlFile(home, o.serverUrl) : undefined;
  const unset = [
    ...LIBPQ_TARGETING_VARS.filter((k) => vars[k] === undefined),
    ...(urlFile ? ['PGX_DATABASE_URL'] : []),
  ];
  const lines = [`unset ${unset.join(' ')}`, ...Object.entries(vars).map(([k, v]) => `export ${k}=${q(v!)}`)];
  if (urlFile) lines.push(`export PGX_DATABASE_URL_FILE=${q(urlFile)}`);
  const file = writePassfile(home, conn);
  lines.push(file ? `export PGPASSFILE=${q(file)}` : 'unset PGPASSFILE');
  appendFileSync(envFile, lines.join('\n') + '\n');
}

const q = shellQuote;
