// `pgx agent exec`: ensure the branch, then run the command with libpq's environment pointing at it. The command
// text is passed through untouched (no shell of ours in between); stdio is inherited, signals forwarded, and the
// exit status passed through (128 + n when the child dies of signal n).
import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Config } from './config.js';
import { PgxError } from './errors.js';
import { type Identity } from './identity.js';
import { withEngine, type Engine } from './engine/context.js';
import { ensureBranch, retireBranch, type EnsureResult } from './engine/branch.js';
import * as registry from './registry.js';
import { libpqEnv, pinAgainstBashEnv } from './server/libpq-env.js';

export interface Target {
  agentId?: string;
  execId?: string;
  sessionId?: string;
}

export function identityFor(config: Config, t: Target): Identity {
  return { project: config.project, host: config.host, sessionId: t.sessionId, agentId: t.agentId, execId: t.execId };
}

/**
 * Ensure the target's branch. `--agent` without a session id (the PreToolUse rewrite carries only the agent id;
 * Claude Code normally exports CLAUDE_CODE_SESSION_ID to Bash, which fills it in) attaches to the one branch the hook
 * made for that agent in this project on this host. It never creates one without the session, and when the agent
 * id has branches in more than one session it refuses rather than guess, so a command can't land on another's branch.
 */
export async function ensureTarget(e: Engine, t: Target, opts: { keep?: boolean } = {}): Promise<EnsureResult> {
  if (t.agentId !== undefined && t.sessionId === undefined) {
    const recs = (await registry.findRecords(e.db, { project: e.config.project, agentId: t.agentId })).filter((r) => r.kind === 'subagent' && r.host === e.config.host);
    const sessions = new Set(recs.map((r) => r.session_id));
    if (recs.length === 0) {
      throw new PgxError('NOT_FOUND', `No branch for agent ${t.agentId} in project "${e.config.project}".`, 'Pass --session <id> (or run inside Claude Code, which sets CLAUDE_CODE_SESSION_ID) so pgx can create it.');
    }
    if (sessions.size > 1) {
      throw new PgxError('USAGE', `Agent ${t.agentId} has branches in ${sessions.size} sessions of project "${e.config.project}".`, 'Pass --session <id> (Claude Code sets CLAUDE_CODE_SESSION_ID for its Bash commands).');
    }
    t = { ...t, sessionId: recs[0]!.session_id ?? undefined };
  }
  if (t.agentId === undefined && t.execId === undefined && t.sessionId === undefined) {
    throw new PgxError('USAGE', 'Say which branch: --agent <id>, --id <id> or --session <id>.', 'e.g. `pgx agent exec --id demo -- psql -c "select 1"`.');
  }
  return ensureBranch(e, identityFor(e.config, t), opts);
}

export interface ExecReport {
  agent_id: string | null;
  id: string | null;
  branch: string;
  source: string | null;
  created: string;
  fresh: boolean;
  method: string;
  elapsed_ms: number;
  status: number;
  retired?: boolean;
}

const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];

export async function runExec(config: Config, t: Target, command: string[], opts: { keep?: boolean; json?: boolean }): Promise<number> {
  if (command.length === 0) throw new PgxError('USAGE', 'No command given.', 'Put the command after --, e.g. `pgx agent exec --id x -- psql`.');
  const t0 = performance.now();
  const ensured = await withEngine(config, (e) => ensureTarget(e, t, { keep: opts.keep }), { quiet: true });
  const setupMs = Math.round(performance.now() - t0);

  const env = libpqEnv(process.env, ensured.conn);
  env.PGX_BRANCH = ensured.branch;
  pinAgainstBashEnv(env, config.home);
  const status = await new Promise<number>((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit', env });
    const forward = (sig: NodeJS.Signals) => () => {
      try {
        child.kill(sig);
      } catch {
        // already gone
      }
    };
    const handlers = FORWARDED.map((sig) => [sig, forward(sig)] as const);
    for (const [sig, h] of handlers) process.on(sig, h);
    child.on('error', (err) => {
      for (const [sig, h] of handlers) process.off(sig, h);
      reject(new PgxError('EXEC_FAILED', `Could not start "${command[0]}": ${err.message}`, 'Check the command name and PATH.'));
    });
    child.on('close', (code, signal) => {
      for (const [sig, h] of handlers) process.off(sig, h);
      resolve(code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0));
    });
  });

  // A throwaway --id branch (made or revived by this exec) lives as long as its command, unless --keep.
  let retired = false;
  if (t.execId !== undefined && ensured.method !== 'attach' && !opts.keep) {
    await withEngine(config, async (e) => {
      const rec = await registry.findByName(e.db, ensured.branch);
      if (rec) retired = (await retireBranch(e, rec)).action === 'retired';
    }, { quiet: true }).catch((err) => process.stderr.write(`pgx: could not retire ${ensured.branch}: ${(err as Error).message}\n`));
  }
  if (opts.json) {
    const report: ExecReport = {
      agent_id: t.agentId ?? null,
      id: t.execId ?? null,
      branch: ensured.branch,
      source: ensured.record.source,
      created: new Date(ensured.record.created_at).toISOString(),
      fresh: ensured.fresh,
      method: ensured.method,
      elapsed_ms: setupMs,
      status,
      retired,
    };
    process.stderr.write(JSON.stringify(report) + '\n');
  }
  return status;
}
