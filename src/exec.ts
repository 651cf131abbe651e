// `pgx agent exec`: ensure the branch, then run the command with libpq's environment pointing at it. The command
// text is passed through untouched (no shell of ours in between); stdio is inherited, signals forwarded, and the
// exit status passed through (128 + n when the child dies of signal n).
import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Config } from './config.js';
import { EXIT, PgxError } from './errors.js';
import { attachOrEnsure, withEngine, type Target } from './engine/api.js';
import { libpqEnv, pinAgainstShellStartup } from './server/libpq-env.js';
import { hasTicket } from './routing-ticket.js';

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
  // From Claude Code's Bash tool, a subagent's exec runs only what pgx's hook routed (routing-ticket.ts).
  if (t.agentId !== undefined && process.env.CLAUDECODE === '1' && !hasTicket(config.home, t.agentId, config.projectDir, command)) {
    throw new PgxError(
      'REFUSED',
      'pgx refused this `agent exec --agent`: its hook did not route this command, so your permission rules never judged it.',
      'Run the command itself; inside a subagent pgx routes it to the branch. (If pgx hooks are disabled, commands are not routed at all.)',
    );
  }
  const t0 = performance.now();
  const ensured = await attachOrEnsure(config, t); // progress only if the local server starts
  const setupMs = Math.round(performance.now() - t0);

  const env = libpqEnv(process.env, ensured.conn);
  env.PGX_BRANCH = ensured.branch;
  pinAgainstShellStartup(env, config.home, command[0]!);
  let startError: unknown;
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
  }).catch((e: unknown) => {
    startError = e; // the throwaway branch below is still retired: a command that never started needs it no more
    return EXIT.execFailed;
  });

  // A throwaway --id branch (made or revived by this exec) lives as long as its command, unless --keep.
  let retired = false;
  if (t.execId !== undefined && ensured.method !== 'attach' && !opts.keep) {
    await withEngine(config, async (e) => {
      retired = (await e.retire({ branch: ensured.branch })).some((r) => r.action === 'retired');
    }, { quiet: true }).catch((err) => process.stderr.write(`pgx: could not retire ${ensured.branch}: ${(err as Error).message}\n`));
  }
  if (startError) throw startError;
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
