// What the broker runs for a request, the same work as the hook process or the in-process exec would do: the hook
// runner (hooks/claude/answer.ts) and the routed-exec pipeline (exec/exec.ts route). The broker only carries requests
// (src/broker/); this is the way in its requests take, handed to `pgx agent broker serve` by the CLI's entry (cli.ts).
import type { BrokerWork } from '../broker/server.js';
import { templateInsteadWarning, type OpenOptions } from '../engine/api.js';
import { route, routedTarget, routeFailOpen } from '../exec/exec.js';
import { parseRoutedExec } from '../exec/exec-argv.js';
import { confinementOf, isLauncherOf } from '../exec/routed-ancestry.js';
import { answerHook } from '../hooks/claude/answer.js';
import { isHookEvent } from '../hooks/claude/events.js';
import { errorReply } from '../lib/output.js';

/** Exported for the hostile-payload corpus too (tests/blackbox/hooks-hostile.test.ts), which calls it as the broker does. */
export const brokerWork: BrokerWork = {
  async hook(req, ctx) {
    if (!isHookEvent(req.event)) return { fallback: `not a hook event: ${req.event}` };
    const print = await answerHook(req.event, {
      stdin: req.stdin,
      env: ctx.env,
      cwd: req.cwd,
      reuse: ctx.reuse,
      connectWaitMs: ctx.connectWaitMs,
      via: 'broker',
      afterAnswer: ctx.afterAnswer,
    });
    return print === undefined ? { ok: true } : { ok: true, print };
  },
  async exec(req, ctx) {
    // The routing judges and records the launcher's process tree: only for the launcher that asks (else: in-process).
    if (
      !isLauncherOf(req.pid, {
        ...req,
        agent: 'agent' in req ? req.agent : undefined,
        session: 'session' in req ? req.session : undefined,
      })
    )
      return { fallback: 'the request names no launcher of this exec' };
    try {
      const session = 'session' in req ? req.session : undefined;
      const load = () =>
        routedTarget(
          'agent' in req ? { agent: req.agent, cwd: req.cwdFlag } : { session, cwd: req.cwdFlag },
          req.cwd,
          ctx.env,
        );
      const opts = { quiet: true, reuse: ctx.reuse, connectWaitMs: ctx.connectWaitMs };
      // a session's command fails open (decision 205); a subagent's fails closed: any error below is its refusal
      const routed =
        session !== undefined
          ? await routeFailOpen(load, req.command, req.env, opts, {}, req.pid)
          : await routeSubagent(load(), req.command, req.env, opts, req.pid!);
      const env = Object.fromEntries(
        Object.entries(routed.env).filter((e): e is [string, string] => e[1] !== undefined),
      );
      const miss = routed.branch === null ? undefined : routed.ensured.fork?.miss;
      return routed.branch === null
        ? { ok: true, env, branch: null, warning: routed.warning }
        : { ok: true, env, branch: routed.branch, ...(miss ? { warning: templateInsteadWarning(miss) } : {}) };
    } catch (e) {
      const reply = errorReply(e);
      return { ok: false, stderr: reply.text, exitCode: reply.exitCode };
    }
  },
  parseExec: parseRoutedExec,
  hookAllowed: (pid) => confinementOf(pid).kind === 'free',
};

const routeSubagent = (
  l: ReturnType<typeof routedTarget>,
  command: string[],
  env: NodeJS.ProcessEnv,
  opts: OpenOptions,
  pid: number,
) => route(l.config, l.target, command, env, opts, {}, pid);
