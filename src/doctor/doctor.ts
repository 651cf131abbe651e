// `pgx agent doctor`: every check in order, each {name, status, detail, fix?}. The server is connected lazily and
// once; when it is unreachable the checks that need it say "skip" and the others (config, hooks, log) still run.
import { resolve } from 'node:path';
import { findConfigFile, loadConfig, pgxHome, type Config } from '../project/config.js';
import { exampleConfigPath } from '../project/config-schema.js';
import { isPgxError } from '../lib/errors.js';
import { quoteIfNeeded } from '../lib/shell.js';
import { lazyServer } from './connection.js';
import { isConnectionLost } from '../server/db.js';
import { serverCheck, roleCheck } from './server-checks.js';
import { originCheck, templateCheck } from './template-check.js';
import { maskCheck } from './mask-check.js';
import { poolCheck } from './pool-check.js';
import { diskCheck } from './disk-check.js';
import { brokerCheck } from './broker-check.js';
import { hooksCheck, inspectScopes } from './hooks-check.js';
import { permissionsCheck } from './permissions-check.js';
import { hookLogCheck } from './hook-log-check.js';
import { branchesCheck, guardsCheck, orphansCheck } from './branch-checks.js';
import { rolesCheck } from './roles-check.js';
import { frozenCheck } from './frozen-check.js';
import { forkCheck } from './fork-check.js';
import { clientToolsCheck } from './client-tools-check.js';
import { dotenvCheck } from './dotenv-check.js';
import { codexCheck } from './codex-check.js';
import { copilotCheck } from './copilot-check.js';
import { mcpCheck } from './mcp-check.js';
import { runtimeMcpCheck } from './runtime-mcp-check.js';
import { fail, ok, skip, type Check, type DoctorContext } from './types.js';

export type { Check, CheckStatus } from './types.js';

export interface DoctorReport {
  ok: boolean;
  checks: Check[];
}

function configCheck(cwd: string): { check: Check; config?: Config } {
  const file = findConfigFile(cwd);
  try {
    const config = loadConfig({ cwd });
    if (!file)
      return {
        check: fail(
          'config',
          `no .pgx.toml in ${cwd} or above: the hooks ignore this project`,
          `pgx init --cwd ${quoteIfNeeded(cwd)}`,
        ),
        config,
      };
    const server = config.serverUrl
      ? process.env.PGX_DATABASE_URL
        ? 'PGX_DATABASE_URL'
        : '[server] url'
      : 'the embedded local server';
    return {
      check: ok(
        'config',
        `${file} (project "${config.project}", source ${config.source ? `"${config.source}"` : 'none'}, server from ${server})`,
      ),
      config,
    };
  } catch (e) {
    const message = isPgxError(e) ? e.message.replace(/\n\s*/g, '; ').replace(/:; /g, ': ') : String(e);
    // the loader's hint names the line, or each key (with "did you mean"); a generic "the keys named above" named none
    const fix = isPgxError(e)
      ? e.hint.includes('pgx init --force')
        ? e.hint
        : `${e.hint.replace(/\.$/, '')}; or rewrite it: pgx init --force`
      : `fix ${file} (every key: ${exampleConfigPath()}), or rewrite it: pgx init --force`;
    return { check: fail('config', message, fix) };
  }
}

/**
 * A check that threw. A lost connection (the server stopped or restarted under the doctor) used to show the driver's
 * "Client has encountered a connection error and is not queryable" as a bug to report; it is a state of the server,
 * with a fix. The checks after the first one it hit say where to look.
 */
export function checkFailure(name: string, e: unknown, lostAt: string | undefined, config: Config | undefined): Check {
  if (isConnectionLost(e)) {
    if (lostAt) return skip(name, `not checked: the connection to the server was lost (see the ${lostAt} check)`);
    const server = config?.serverUrl ? `the server of ${config.serverUrlFrom ?? '[server] url'}` : "pgx's local server";
    const fix = config?.serverUrl
      ? `check that ${server} is up (\`pg_isready\`), then run \`pgx agent doctor\` again`
      : '`pgx local status` (`pgx local up` if it is stopped), then run `pgx agent doctor` again';
    return fail(
      name,
      `the connection to ${server} was lost during this check (it stopped or restarted, or an administrator ended the session)`,
      fix,
    );
  }
  return fail(
    name,
    `the check itself failed: ${isPgxError(e) ? e.message : (e as Error).message}`,
    'rerun with DEBUG=pgx and report it',
  );
}

export async function runDoctor(opts: { cwd?: string } = {}): Promise<DoctorReport> {
  const cwd = resolve(opts.cwd ?? process.cwd());
  const { check: cfg, config } = configCheck(cwd);
  const projectDir = config?.projectDir ?? (findConfigFile(cwd) ? resolve(findConfigFile(cwd)!, '..') : cwd);
  const conn = lazyServer(config, config?.home ?? pgxHome());
  const ctx: DoctorContext = {
    projectDir,
    config,
    home: config?.home ?? pgxHome(),
    server: () => conn.server(),
    registry: () => conn.registry(),
  };
  const found = inspectScopes(projectDir);
  // Codex's and Copilot's lines, read once (the codex check runs `codex --version`)
  const codex = codexCheck(projectDir);
  const copilot = copilotCheck(projectDir);
  const codexMcp = codex && runtimeMcpCheck('codex', projectDir);
  const copilotMcp = copilot && runtimeMcpCheck('copilot', projectDir);
  const steps: [string, () => Check | Promise<Check>][] = [
    ['server', () => serverCheck(ctx)],
    ['role', () => roleCheck(ctx)],
    ['roles', () => rolesCheck(ctx)],
    ['template', () => templateCheck(ctx)],
    ['origin', () => originCheck(ctx)],
    ['mask', () => maskCheck(ctx)],
    ['pool', () => poolCheck(ctx)],
    ['disk', () => diskCheck(ctx)],
    ['client-tools', () => clientToolsCheck(ctx)],
    ['broker', () => brokerCheck(ctx)],
    ['hooks', () => hooksCheck(ctx, found)],
    // only when pgx's Codex hooks are installed somewhere (else no line: a Claude-only setup reads as before)
    ...(codex ? ([['codex', () => codex]] as [string, () => Check][]) : []),
    // the same for the GitHub Copilot CLI's hooks
    ...(copilot ? ([['copilot', () => copilot]] as [string, () => Check][]) : []),
    // their database MCP servers, which pgx can't route per agent (a known limit said as a choice; decision 530)
    ...(codexMcp ? ([['codex-mcp', () => codexMcp]] as [string, () => Check][]) : []),
    ...(copilotMcp ? ([['copilot-mcp', () => copilotMcp]] as [string, () => Check][]) : []),
    ['permissions', () => permissionsCheck(ctx, found)],
    ['mcp', () => mcpCheck(ctx)],
    ['hook-log', () => hookLogCheck(ctx)],
    ['branches', () => branchesCheck(ctx)],
    ['orphans', () => orphansCheck(ctx)],
    ['frozen-copies', () => frozenCheck(ctx)],
    ['session-forks', () => forkCheck(ctx)],
    ['guards', () => guardsCheck(ctx)],
    ['env-files', () => dotenvCheck(ctx)],
  ];
  const checks: Check[] = [cfg];
  let lostAt: string | undefined;
  try {
    for (const [name, run] of steps) {
      try {
        checks.push(await run());
      } catch (e) {
        // One broken check must not hide the others. The server going away is no bug of the check: said so, once.
        checks.push(checkFailure(name, e, lostAt, config));
        if (isConnectionLost(e)) lostAt ??= name;
      }
    }
  } finally {
    await conn.close();
  }
  // A Codex-only (or Copilot-only) setup: the Claude Code checks have no install to check (not a failure); the codex
  // (copilot) line checks it.
  const other = checks.find((c) => c.name === 'codex' || c.name === 'copilot')?.name;
  if (other) {
    for (const [i, c] of checks.entries()) {
      const none =
        (c.name === 'hooks' && c.status === 'fail' && c.detail.startsWith('no pgx hooks in')) ||
        (c.name === 'permissions' && c.status === 'warn' && c.detail.startsWith('no wrapper rule'));
      if (none && !found.some((f) => f.insp.count > 0 || f.plugin))
        checks[i] = skip(
          c.name,
          `no Claude Code install (the ${other === 'codex' ? 'Codex CLI install is the codex check' : 'Copilot CLI install is the copilot check'})`,
        );
    }
  }
  return { ok: !checks.some((c) => c.status === 'fail'), checks };
}
