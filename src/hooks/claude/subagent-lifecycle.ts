// A subagent's two ends. SubagentStart: its own branch ensured (a copy of the session's, or of the source), the words
// that tell it so, the pool topped up after the answer. SubagentStop: the branch retired (kept when it changed
// something), its routing tickets dropped, and a doorbell posted for the parent (handoff-inbox.ts).
import { ForkUnavailableError, withEngine } from '../../engine/api.js';
import { dropTickets } from '../../exec/routing-ticket.js';
import * as P from './payloads.js';
import { startPoolFill } from './pool-fill.js';
import { postHandoff } from './handoff-inbox.js';
import { noteRetired } from '../../mcp/retire-notices.js';
import { subagentTarget, type Handler } from './hook-handler.js';
import { missedContext, snapshotOf, tellParentOfMiss, templateInsteadNote } from './fork-miss-texts.js';

export const subagentStart: Handler<typeof P.subagentStartSchema> = {
  schema: P.subagentStartSchema,
  async run(p, h) {
    let r;
    try {
      r = await withEngine(h.config, (e) => e.ensure(subagentTarget(p)), h.engine);
    } catch (err) {
      if (!(err instanceof ForkUnavailableError)) throw err;
      // No branch without the session's state (fork-miss.ts): the subagent, the parent and the log hear why.
      tellParentOfMiss(h, p.session_id, err.miss);
      return {
        output: { hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: missedContext(err.miss) } },
        outcome: `error:fork-unavailable:${err.miss.reason}`,
        branch: null,
      };
    }
    const miss = r.fork?.miss;
    if (miss) tellParentOfMiss(h, p.session_id, miss);
    // A claim took a member, a clone found none: top the pool up, detached, after this hook's answer is ready.
    if (r.method === 'claim' || r.method === 'clone')
      (h.afterAnswer ?? ((fn) => fn()))(() => startPoolFill(h.config, h.env));
    const snapshot = snapshotOf(h.config);
    // What it is a copy of (engine/fork.ts, freeze.ts): everything the session's branch had committed when this
    // subagent started, or (said in one sentence) why not.
    const from = r.fork?.parent
      ? `a copy of your session's branch "${r.fork.parent}" as it is now: everything committed on it before you ` +
        `started (its migrations and data included; not a transaction still open there)`
      : snapshot;
    const forkNote = miss
      ? ` ${templateInsteadNote(miss, snapshot)}`
      : r.fork?.note
        ? ` pgx could not copy your session's branch (${r.fork.note}), so yours is ${snapshot} instead.`
        : '';
    return {
      output: {
        hookSpecificOutput: {
          hookEventName: 'SubagentStart',
          additionalContext:
            `pgx: you have your own PostgreSQL database branch "${r.branch}", cloned from ${from}.${forkNote} \`pgx ` +
            `agent reset\` puts it back to that state if you need a clean start. Every Bash command you run is routed ` +
            `to it automatically (PGDATABASE and the other libpq variables are set per command), so migrations and ` +
            `test data stay yours; other agents cannot see them. Use psql or your tools without connection flags, ` +
            `and never load a .env file with override (dotenv override: true, dotenv -o, load_dotenv(override=True), ` +
            `set -a; . ./.env): that would point your commands back at the shared database.`,
        },
      },
      // A template in place of the session's state is not "ok" (decision 485): the log and the doctor count it.
      outcome: miss ? `fallback:template:${r.method}:${miss.reason}` : `ok:${r.method}`,
      branch: r.branch,
    };
  },
  onError(message) {
    return {
      output: {
        hookSpecificOutput: {
          hookEventName: 'SubagentStart',
          additionalContext:
            `pgx: your own database branch could not be prepared yet (${message}). pgx tries again before each of ` +
            `your Bash commands: if it succeeds, the command runs on your branch as usual; if it fails, that command ` +
            `is refused (never run against a shared database) and the refusal says why. If commands keep being refused, ` +
            `tell the user to run \`pgx agent doctor\`.`,
        },
      },
      outcome: 'error',
    };
  },
};

export const subagentStop: Handler<typeof P.subagentStopSchema> = {
  schema: P.subagentStopSchema,
  async run(p, h) {
    dropTickets(h.config.home, p.agent_id); // the agent is done: no more routed commands of its to admit
    const {
      retired: r,
      changes,
      kept,
    } = await withEngine(h.config, (e) => e.stopSubagent(subagentTarget(p)), h.engine);
    if (!r) return { outcome: 'no-branch' };
    noteRetired(h.config.home, r.name); // pgx's MCP fronts stop their copy of a server on this branch
    // The summary failing never fails the stop: the branch is retired (and kept), the log says why (`changes.error`).
    const summary = changes?.error
      ? `:changes=failed(${changes.error})`
      : changes
        ? `:changes=${changes.changed ? 'yes' : 'none'}`
        : '';
    // No output: Claude Code gives a SubagentStop's additionalContext to the subagent, as one more turn. The parent
    // gets it from its inbox at its next prompt or Bash command (handoff-inbox.ts).
    const posted =
      changes &&
      changes.changed !== false &&
      postHandoff(h.config.home, p.session_id, { branch: r.name, at: changes.at });
    return {
      outcome: `${r.action}:terminated=${r.backends_terminated}:remaining=${r.backends_remaining}${summary}${kept ? ':kept' : ''}${posted ? ':handoff' : ''}`,
      branch: r.name,
      changes: changes ?? undefined,
    };
  },
  onError: () => ({ outcome: 'error' }), // never blocks the stop
};
