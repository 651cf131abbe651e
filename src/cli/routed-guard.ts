// The CLI's side of agents kept apart (decision 450): before any command runs, where does this pgx stand? Outside
// every routed command (the user's terminal, the parent session's Bash): anything, as always. Inside subagent A's
// routed command (exec/routed-ancestry.ts: its process tree, whatever its environment says): read-only commands, and
// the branch commands (exec, up, reset, diff, down, forget) on A's own branch only. Everything else (adopt, which
// rewrites the session's branch; gc, pool drain, template and source admin, the local server, install, the hooks,
// which speak for Claude Code) is refused: none of it is a subagent's to do. Where pgx can't see the whole process
// tree (more than 128 parents, a PID namespace it doesn't trust: decision 452), it can't name the agent: read-only
// commands, and `agent exec`, which runs only what pgx's hook routed (exec.ts); nothing else.
import type { Command } from 'commander';
import { confinementOf, type Confinement } from '../exec/routed-ancestry.js';
import { crossingError } from '../exec/exec.js';

/** Commands that read, or that pgx itself starts from inside a routed command (a broker for the next command). */
const ANYWHERE = new Set([
  'agent ls',
  'agent doctor',
  'agent broker status',
  'agent broker start',
  'agent broker serve',
  'agent pool status',
  'agent pool fill',
  'agent verify-probe',
  'local status',
  'template ls',
  'mcp ls',
]);

/** Commands that act on one branch: allowed on the caller's own. */
const OWN_BRANCH = new Set(['agent exec', 'agent up', 'agent reset', 'agent diff', 'agent down', 'agent forget']);

interface Flags {
  agent?: string;
  id?: string;
  session?: string;
  branch?: string;
  project?: boolean;
  from?: string;
  against?: string;
  failOpen?: boolean;
}

function pathOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Do these flags name only A's branch (and read nothing of another's: --from, --against)? */
function ownBranch(c: Extract<Confinement, { kind: 'agent' }>, o: Flags, env: NodeJS.ProcessEnv): boolean {
  if (o.id !== undefined || o.project || o.failOpen) return false;
  if (o.from !== undefined && o.from !== 'session' && o.from !== 'template') return false;
  if (o.against !== undefined && o.against !== 'parent' && o.against !== 'template') return false;
  if (o.agent !== undefined)
    return (
      o.agent === c.agent &&
      (o.session === undefined || c.session === null || o.session === c.session) &&
      (o.branch === undefined || o.branch === c.branch)
    );
  if (o.branch !== undefined) return c.branch !== null && o.branch === c.branch;
  if (o.session !== undefined) return false;
  // no selector: the command's own branch, which reset and diff read from PGX_BRANCH (the command's to change)
  return env.PGX_BRANCH === undefined || env.PGX_BRANCH === c.branch;
}

/** An exec that may be one pgx's hook routed (route() then checks its ticket: exec.ts): no --id, no other branch read. */
const routedExecFlags = (o: Flags) =>
  o.id === undefined && !o.project && (o.from === undefined || o.from === 'session' || o.from === 'template');

/** commander's preAction hook: throws the refusal (the action's catch prints it, exit 6) when this pgx may not. */
export function refuseOutsideOwnBranch(cmd: Command, pid = process.pid, env: NodeJS.ProcessEnv = process.env): void {
  const path = pathOf(cmd);
  if (ANYWHERE.has(path)) return;
  const c = confinementOf(pid);
  if (c.kind === 'free') return;
  if (c.kind === 'unknown' && path === 'agent exec' && routedExecFlags(cmd.opts<Flags>())) return; // its ticket decides
  if (c.kind === 'agent' && OWN_BRANCH.has(path) && ownBranch(c, cmd.opts<Flags>(), env)) return;
  throw crossingError(c, `\`pgx ${path}\` here`);
}
