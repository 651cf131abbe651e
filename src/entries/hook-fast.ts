// The light entry (dist/hook-fast.cjs): what bin/pgx.js loads for every hook and every routed command, before and
// usually instead of anything heavier. Node built-ins and a few small modules only.
//  - The parent session's PreToolUse: every Bash command of the main thread runs this hook, and for it pgx has one
//    job: refuse a typed launcher (rewrite.ts). Anything else gets no output whatever the project's config says (the
//    parent's commands are not rewritten; a broken config fails open for them), so it is answered here.
//  - Every other hook but SessionStart, and the routed `agent exec --agent` (and `--session … --fail-open`), go to the broker (broker/), which runs
//    the same code with its connections already open. No broker, or one that can't answer: the caller gets the
//    payload back and runs the in-process hook (dist/hook.cjs) or exec (dist/exec-fast.cjs) as before.
import { appendHookLog, hookLogLine } from '../hooks/claude/log.js';
import { readHookStdin } from '../hooks/claude/stdin.js';
import { claudeCodeVersion } from '../hooks/claude/claude-version.js';
import { launcherPath } from '../hooks/claude/launcher.js';
import { parentBashCall } from '../hooks/claude/rewrite.js';
import { hookDeadlineMs, isHookEvent, toolKind } from '../hooks/claude/events.js';
import { pgxHome } from '../project/home.js';
import { hasHandoff } from '../hooks/claude/handoff-inbox.js';
import { askBroker, brokerAddress, startBroker, type Asked, type BrokerAsk } from '../broker/client.js';
import { requestEnv } from '../broker/protocol.js';
import { parseRoutedExec } from '../exec/exec-argv.js';
import { refuseHookInsideRoutedCommand } from '../exec/routed-ancestry.js';

/**
 * Answers a parent's call that needs nothing of pgx (true), or says the payload needs more than that (false): its
 * Bash and Monitor commands (not a launcher), its PowerShell, its MCP resource calls, its CronCreate, Skill and REPL.
 * The parent's MCP tool calls go on to the full hook: one to a server pgx routes is recorded for pgx's front
 * (hooks/claude/mcp-call.ts).
 */
function answerParentBash(text: string, t0: number): boolean {
  let p: Record<string, unknown>;
  try {
    p = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return false;
  }
  if (typeof p !== 'object' || p === null || p.agent_id !== undefined) return false;
  const kind = toolKind(p.tool_name);
  const quiet = kind === 'powershell' || kind === 'resource' || kind === 'cron' || kind === 'skill' || kind === 'repl';
  // a launcher: the full hook denies it, with the log line and reason
  if (!quiet && parentBashCall(p, launcherPath()) !== 'skip') return false;
  if (kind === 'bash' && hasHandoff(pgxHome(), p.session_id)) return false; // the full hook delivers its subagents' change summaries
  const projectDir = process.env.CLAUDE_PROJECT_DIR || (typeof p.cwd === 'string' ? p.cwd : null);
  appendHookLog(
    pgxHome(),
    hookLogLine('pre-tool-use', p, {
      t0,
      outcome: kind === 'bash' ? 'skipped:not-subagent-bash' : `skipped:parent-${kind}`,
      claudeCode: claudeCodeVersion(),
      projectDir,
    }),
  );
  return true;
}

/** A broker that took the request and went silent: the hook can't redo the work in the time left. */
const BROKER_TIMEOUT_DENY = {
  hookSpecificOutput: {
    hookEventName: 'PreToolUse',
    permissionDecision: 'deny',
    permissionDecisionReason:
      'pgx: its broker did not answer in time, so the command was not routed to your database branch and did ' +
      'not run. Retry it; if this repeats, run `pgx agent broker stop` and `pgx agent doctor`.',
  },
};

/** A broker that took SubagentStart and went silent: the subagent hears what its commands will meet (as onError says). */
const BROKER_TIMEOUT_START = {
  hookSpecificOutput: {
    hookEventName: 'SubagentStart',
    additionalContext:
      "pgx: your own database branch could not be prepared yet (pgx's broker did not answer in time). pgx tries " +
      'again before each of your Bash commands: if it succeeds, the command runs on your branch as usual; if it ' +
      'fails, that command is refused (never run against a shared database) and the refusal says why.',
  },
};

/** What the hook prints when the broker took the request and did not answer in time (none: the event isolates nothing). */
const timeoutAnswer = (event: string): string | undefined =>
  event === 'pre-tool-use'
    ? JSON.stringify(BROKER_TIMEOUT_DENY)
    : event === 'subagent-start'
      ? JSON.stringify(BROKER_TIMEOUT_START)
      : undefined;

/** Asks the broker; a missing one is started for next time. */
async function viaBroker(req: BrokerAsk, timeoutMs: number, onSent?: () => void): Promise<Asked | undefined> {
  const launcher = launcherPath();
  const addr = brokerAddress(process.env, launcher, true);
  if (!addr) return undefined;
  const asked = await askBroker(addr, req, timeoutMs, onSent);
  if (asked.failure === 'absent') await startBroker(addr, launcher);
  return asked;
}

/**
 * `agent hook <event>`: answers it here or through the broker (the answer is written, returns undefined), or returns
 * the payload text for the in-process hook (bin/pgx.js passes it to claude-hook.ts runHookArgv).
 */
export async function lightHook(event: string): Promise<string | undefined> {
  const t0 = performance.now();
  const text = await readHookStdin();
  try {
    if (event === 'pre-tool-use' && answerParentBash(text, t0)) return undefined; // does nothing but log: no check needed
    if (refuseHookInsideRoutedCommand()) return undefined;
    if (event === 'session-start' || !isHookEvent(event)) return text; // SessionStart starts the broker
    const deadline = hookDeadlineMs(event);
    const asked = await viaBroker(
      { op: 'hook', event, stdin: text, cwd: process.cwd(), env: requestEnv(process.env) },
      deadline + 1500,
    );
    const answer = asked?.answer;
    let print: string | undefined;
    if (answer && 'ok' in answer && answer.ok && !('env' in answer) && !('status' in answer)) print = answer.print;
    else if (asked?.failure === 'timeout') print = timeoutAnswer(event);
    else return text;
    await new Promise<void>((res) => process.stdout.write(print ? print + '\n' : '', () => res()));
    return undefined;
  } catch {
    // Anything unexpected here (a deleted working directory: process.cwd() throws) is the in-process hook's to
    // answer, with the payload: it fails closed where isolation is at stake, and never exits 1.
    return text;
  }
}

/**
 * The routed `agent exec --agent …` (or a Codex session's `--session … --fail-open`) through the broker: true when it
 * ran (or was refused) and process.exitCode says how it ended; false when the in-process exec must run it.
 */
export async function fastRoutedExec(argv: string[]): Promise<boolean> {
  const routed = parseRoutedExec(argv);
  if (!routed) return false;
  // A Codex session's command in Codex's default sandbox: no socket opens there (decision 203), the broker's neither.
  // The in-process exec runs it unrouted at once, with its warning, without trying a connect (decision 205).
  if (routed.session !== undefined && process.env.CODEX_SANDBOX_NETWORK_DISABLED === '1') return false;
  const env = requestEnv(process.env);
  let cwd: string;
  try {
    cwd = process.cwd();
  } catch {
    return false; // a deleted working directory: the in-process exec says what it says
  }
  // node:child_process (~10 ms to load) loads while the broker works, not after its answer.
  let spawner: Promise<typeof import('../exec/exec-spawn.js')> | undefined;
  const loadSpawner = () => (spawner ??= import('../exec/exec-spawn.js'));
  const who = routed.agent !== undefined ? { agent: routed.agent } : { session: routed.session };
  const asked = await viaBroker(
    { op: 'exec', ...who, cwdFlag: routed.cwd, cwd, env, command: routed.command, pid: process.pid },
    120_000,
    () => setImmediate(loadSpawner),
  ).catch(() => undefined);
  const answer = asked?.answer;
  if (!answer || !('ok' in answer)) return false;
  if (!answer.ok) {
    process.stderr.write(answer.stderr);
    process.exitCode = answer.exitCode;
    return true;
  }
  if (!('env' in answer)) return false;
  // a session's command, run unrouted (fail open); or a branch made now with the template in place of the session's state
  if (answer.warning) process.stderr.write(answer.warning);
  const { spawnCommand } = await loadSpawner(); // node:child_process: only a routed command needs it
  process.exitCode = (await spawnCommand(routed.command, answer.env)).status;
  return true;
}
