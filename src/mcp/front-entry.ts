// A routed server's entry: pgx stands in front of the user's own server under the same name (so its tools keep their
// names, `mcp__<name>__<tool>`), and the entry carries the original, so that uninstall puts it back byte for byte and
// the front knows what to start for each branch (decision 490).
//
//   "pg": { "command": "pgx", "args": ["mcp", "serve", "pg"],
//           "env": { ...the user's own env..., "PGX_MCP_COMMAND": "npx",
//                    "PGX_MCP_ARG_0": "-y", "PGX_MCP_ARG_1": "@modelcontextprotocol/server-postgres",
//                    "PGX_MCP_ARG_2": "postgresql://me:secret@localhost/shop_dev", "PGX_MCP_ARGC": "3" } }
//
// The original command and args go into the entry's ENV, one variable each, never into the front's args: an argv is
// readable by every user of the machine (/proc/<pid>/cmdline) and the user's URL may hold a password; an environment
// is not. One variable per argument: Claude Code expands `${VAR}` in env values as it did in args, and a plain
// string survives any expansion (a JSON array would not). Every other key of the entry is left as it was.
import { isPlainObject, type JsonObject } from '../lib/settings-file.js';
import type { StdioFields } from './servers.js';

export const FRONT_ARGS = ['mcp', 'serve'] as const;
const COMMAND = 'PGX_MCP_COMMAND';
const ARGC = 'PGX_MCP_ARGC';
const ARG = 'PGX_MCP_ARG_';
/** "0": the original had no `env` key (restored without one). */
const HAD_ENV = 'PGX_MCP_ENV';
const OWN = new RegExp(`^(${COMMAND}|${ARGC}|${HAD_ENV}|${ARG}\\d+)$`);

/** Is this entry pgx's front (whatever launcher it names)? */
export function isFronted(entry: JsonObject): boolean {
  const { args, env } = entry;
  return (
    Array.isArray(args) &&
    args[0] === FRONT_ARGS[0] &&
    args[1] === FRONT_ARGS[1] &&
    isPlainObject(env) &&
    typeof env[COMMAND] === 'string'
  );
}

/** The entry with pgx in front: `launcher mcp serve <name>`, the original in env. The entry itself is not changed. */
export function frontEntry(entry: JsonObject, fields: StdioFields, name: string, launcher: string): JsonObject {
  const env: Record<string, string> = { ...(fields.env ?? {}) };
  env[COMMAND] = fields.command;
  if (fields.args !== undefined) {
    fields.args.forEach((a, i) => (env[`${ARG}${i}`] = a));
    env[ARGC] = String(fields.args.length);
  }
  if (fields.env === undefined) env[HAD_ENV] = '0';
  const out: JsonObject = {};
  // Key order kept: command and args where they were (args after command when the original had none), env last if new.
  for (const [k, v] of Object.entries(entry)) {
    if (k === 'command') {
      out.command = launcher;
      if (!('args' in entry)) out.args = [...FRONT_ARGS, name];
    } else if (k === 'args') out.args = [...FRONT_ARGS, name];
    else if (k === 'env') out.env = env;
    else out[k] = v;
  }
  if (!('env' in entry)) out.env = env;
  return out;
}

/** The user's own entry back from a fronted one (keys where they were). Undefined: not a front pgx can undo. */
export function originalEntry(fronted: JsonObject): JsonObject | undefined {
  if (!isFronted(fronted)) return undefined;
  const env = fronted.env as Record<string, unknown>;
  const original = originalFields(env);
  if (!original) return undefined;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(fronted)) {
    if (k === 'command') out.command = original.command;
    else if (k === 'args') {
      if (original.args !== undefined) out.args = original.args;
    } else if (k === 'env') {
      if (original.env !== undefined) out.env = original.env;
    } else out[k] = v;
  }
  return out;
}

/**
 * The original command, args and env from a front's environment (the entry's `env`, or the front process's own
 * environment, where Claude Code has expanded the `${VAR}`s). Undefined when it is not whole.
 */
export function originalFields(env: Record<string, unknown>): StdioFields | undefined {
  const command = env[COMMAND];
  if (typeof command !== 'string' || command === '') return undefined;
  let args: string[] | undefined;
  if (env[ARGC] !== undefined) {
    const n = Number(env[ARGC]);
    if (!Number.isSafeInteger(n) || n < 0 || n > 1000) return undefined;
    args = [];
    for (let i = 0; i < n; i++) {
      const a = env[`${ARG}${i}`];
      if (typeof a !== 'string') return undefined;
      args.push(a);
    }
  }
  const rest = Object.entries(env).filter(([k, v]) => !OWN.test(k) && typeof v === 'string') as [string, string][];
  const hadEnv = env[HAD_ENV] !== '0';
  return {
    command,
    ...(args !== undefined ? { args } : {}),
    ...(hadEnv ? { env: Object.fromEntries(rest) } : {}),
  };
}

/** The front process's environment without pgx's own variables (what the user's server may see of it). */
export function withoutFrontVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !OWN.test(k)));
}
