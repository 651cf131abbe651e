// The hostile hook corpus (docs/pgx/local-dev/decisions/211-hostile-hook-corpus.md): payloads Claude Code would never
// send, generated from one seed with fast-check, and the checks every answer to them must pass whatever carried it.
// It knows nothing of transports: a case is the text on stdin plus the hook's environment, and a transport (a
// spawned `pgx agent hook`, the broker's work called in-process, later an HTTP POST) turns it into an Answer. So a new
// transport is one function, run over the same corpus with the same checks.
import fc from 'fast-check';
import { parse as shParse } from 'shell-quote';
import * as z from 'zod';
import { idSchema } from '../../src/engine/identity.js';
import { isRouted, rewriteCommand, type RewriteParams } from '../../src/hooks/claude/rewrite.js';
import {
  preToolUseBash,
  sessionEnd,
  sessionStart,
  subagentStart,
  subagentStop,
  userPromptSubmit,
  type SessionCtx,
} from './hook-payloads.js';
import { hookEnv, knownSecrets, type HookEvent, type Project } from './hooks.js';
import { sql } from './pgx.js';

/** What the corpus is generated against: one project, two sessions, one subagent already started in session A. */
export interface World {
  p: Project & { host: string };
  a: SessionCtx;
  b: SessionCtx;
  /** Started in session A before the corpus runs. */
  a1: string;
  launcher: string;
  /** What the rewrite names: the project directory as pgx's config resolves it, and the shell. */
  projectDir: string;
  shell: string;
  /** A database of the user's (the project's source): never touched. */
  victim: string;
}

export interface Step {
  /** The `pgx agent hook <event>` argument: one of the six, or not. */
  event: string;
  stdin: string | Buffer;
  /** Changes to the hook's environment (undefined removes a variable). */
  env?: NodeJS.ProcessEnv;
}

export type Kind = 'malformed' | 'wrong-type' | 'huge' | 'control' | 'metachar' | 'event-mismatch' | 'replay';

export interface Scenario {
  /** `<kind>#<index>`: stable for a seed, so a failure names its case. */
  id: string;
  kind: Kind;
  label: string;
  /** Run in order: a replay's second step sees what its first did. */
  steps: Step[];
  /** Steps whose answers must name different branches (two identities a careless encoder would merge). */
  distinct?: number[];
  /** The bytes of all its steps' stdin. */
  bytes: number;
}

/** What a transport returns for a step: a process's status, or (in-process) 0; stdout as Claude Code would read it. */
export interface Answer {
  status: number | null;
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** In-process: the broker work said "not mine" (the hook process would then answer itself). */
  fallback?: string;
}

export const SIX_EVENTS: readonly HookEvent[] = [
  'session-start',
  'user-prompt-submit',
  'pre-tool-use',
  'subagent-start',
  'subagent-stop',
  'session-end',
];
const EVENT_NAMES: Record<HookEvent, string> = {
  'session-start': 'SessionStart',
  'user-prompt-submit': 'UserPromptSubmit',
  'pre-tool-use': 'PreToolUse',
  'subagent-start': 'SubagentStart',
  'subagent-stop': 'SubagentStop',
  'session-end': 'SessionEnd',
};
const isSix = (e: string): e is HookEvent => (SIX_EVENTS as readonly string[]).includes(e);

// ---- the pieces hostile payloads are made of ----

/** SQL, shell and path tricks aimed at ids, paths and commands; `{victim}` becomes the user's database. */
const METACHAR = [
  "'; DROP DATABASE {victim}; --",
  '"; DROP DATABASE "{victim}"; --',
  "x' OR '1'='1",
  '$(touch /tmp/pgx-pwned)',
  '`id`',
  '; rm -rf "$HOME"',
  '| cat /etc/passwd',
  '&& psql -d {victim} -c "drop table t"',
  '\\',
  "'",
  '"',
  '%s%n%x',
  '../../../../etc',
  '*',
  '$PGPASSWORD',
  '${PGX_DATABASE_URL}',
  '{victim}',
  'pgx_registry',
  'template1',
  'postgres',
  '-- comment',
  '--agent other',
  '/* */ SELECT pg_sleep(10)',
  "E'\\\\x00'",
  '$$; DROP DATABASE {victim}; $$',
  'pgx_new_deadbeef',
  '#',
  '!!',
  '~root',
  ' leading and trailing ',
];
/** Characters that break things that are not careful: control, invisible, direction, surrogates, non-BMP. */
const CONTROL = [
  '\u0000',
  '\u0001',
  '\u001b[31m',
  '\u007f',
  '\n',
  '\r\n',
  '\t',
  '\u2028',
  '\u200b',
  '\u202e',
  '\ud800',
  '\udfff',
  '\ufeff',
  '\ufffd',
  '😀',
  'e\u0301',
  'İ',
];

/** A metachar string: one of the list, or a random mix of the characters they are made of. */
const metacharArb = fc.oneof(
  fc.constantFrom(...METACHAR),
  fc.string({
    unit: fc.constantFrom(...'\'"`$;|&<>(){}[]*?!#~%\\ =,.-_/:@aZ09'.split('')),
    minLength: 1,
    maxLength: 40,
  }),
);
const controlArb = fc
  .tuple(fc.constantFrom(...CONTROL), fc.constantFrom('', 'a1', 'session'), fc.boolean())
  .map(([c, s, before]) => (before ? c + s : s + c));

/** Any JSON value (the wrong-type replacements). */
const jsonArb = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.constant([]),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.constant({}),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string(), { maxKeys: 3 }),
  fc.string({ maxLength: 20 }),
  fc.constant('1e999'),
);

const hexArb = (n: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'.split('')), minLength: n, maxLength: n });

type Payload = Record<string, unknown>;

/** The six realistic payloads of the world (random fields made deterministic). */
function basePayload(w: World, event: HookEvent, s: SessionCtx, agentId: string | undefined, command: string): Payload {
  const fixed = { prompt_id: 'p-0000', tool_use_id: 'toolu_01corpus' };
  switch (event) {
    case 'session-start':
      return sessionStart(s);
    case 'user-prompt-submit':
      return { ...userPromptSubmit(s), prompt_id: fixed.prompt_id };
    case 'pre-tool-use':
      return {
        ...preToolUseBash(s, command, agentId === undefined ? {} : { agentId }),
        tool_use_id: fixed.tool_use_id,
      };
    case 'subagent-start':
      return { ...subagentStart(s, agentId ?? w.a1), prompt_id: fixed.prompt_id };
    case 'subagent-stop':
      return subagentStop(s, agentId ?? w.a1);
    case 'session-end':
      return sessionEnd(s);
  }
}

/** A step from a payload: the environment Claude Code gives it (its session id, when that can be an env value). */
function step(event: string, payload: Payload | string | Buffer, env: NodeJS.ProcessEnv = {}): Step {
  const stdin = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload);
  const sid = typeof payload === 'object' && !Buffer.isBuffer(payload) ? payload.session_id : undefined;
  return {
    event,
    stdin,
    env: { CLAUDE_CODE_SESSION_ID: typeof sid === 'string' && !sid.includes('\0') ? sid : undefined, ...env },
  };
}

/** Sets a path (`tool_input.command`) in a copy of the payload; undefined deletes it. */
function setPath(p: Payload, path: string, value: unknown): Payload {
  const copy = structuredClone(p);
  const keys = path.split('.');
  let at: Record<string, unknown> = copy;
  for (const k of keys.slice(0, -1)) {
    if (typeof at[k] !== 'object' || at[k] === null) at[k] = {};
    at = at[k] as Record<string, unknown>;
  }
  const last = keys.at(-1)!;
  if (value === undefined) delete at[last];
  else at[last] = value;
  return copy;
}

const ID_FIELDS = [
  'session_id',
  'agent_id',
  'cwd',
  'tool_input.command',
  'agent_type',
  'transcript_path',
  'tool_name',
  'hook_event_name',
  'permission_mode',
  'tool_input.description',
];
const eventArb = fc.constantFrom<HookEvent>(
  'pre-tool-use',
  'pre-tool-use',
  'pre-tool-use',
  'subagent-start',
  'user-prompt-submit',
  'subagent-stop',
  'session-end',
  'session-start',
);

/**
 * One scenario's recipe: drawn by fast-check, then made concrete for a world and a unique tag (the scenario's
 * index), so scenarios that stop or end a branch do it to identities of their own.
 */
type Recipe = { kind: Kind; make(w: World, tag: string): { label: string; steps: Step[]; distinct?: number[] } };

/** The identities a step may use: the world's shared ones, or (for anything that retires) the scenario's own. */
function ids(w: World, event: HookEvent, tag: string): { s: SessionCtx; agent: string | undefined } {
  const own = event === 'subagent-stop' || event === 'session-end' || event === 'session-start';
  const s = own ? { ...w.a, sessionId: `${w.a.sessionId}-${tag}` } : w.a;
  const agent =
    event === 'pre-tool-use' || event === 'subagent-start' || event === 'subagent-stop'
      ? own
        ? `a${tag}`
        : w.a1
      : undefined;
  return { s, agent };
}

const malformed: fc.Arbitrary<Recipe> = fc
  .tuple(
    eventArb,
    fc.nat(),
    fc.constantFrom(
      'truncated',
      'garbage',
      'not-an-object',
      'raw-bytes',
      'bom',
      'two-objects',
      'trailing',
      'deep',
      'duplicate-key',
      'empty',
    ),
    fc.string({ unit: 'binary', maxLength: 64 }),
    jsonArb,
    fc.integer({ min: 1, max: 60_000 }),
  )
  .map(([event, cut, how, garbage, value, depth]) => ({
    kind: 'malformed' as const,
    make(w: World, tag: string) {
      const { s, agent } = ids(w, event, tag);
      const base = basePayload(w, event, s, agent, 'psql -c "select 1"');
      const text = JSON.stringify(base);
      const bodies: Record<string, () => string | Buffer> = {
        truncated: () => text.slice(0, cut % text.length),
        garbage: () => garbage,
        'not-an-object': () => JSON.stringify(value ?? null),
        // invalid UTF-8 and a raw NUL inside a string: not JSON, whatever a decoder makes of it
        'raw-bytes': () =>
          Buffer.concat([
            Buffer.from(text.slice(0, 20)),
            Buffer.from([0x00, 0xff, 0xfe, 0xc3, 0x28]),
            Buffer.from(text.slice(20)),
          ]),
        bom: () => '\ufeff' + text,
        'two-objects': () => `${text}\n${text}`,
        trailing: () => `${text} ${garbage || 'x'}`,
        // nesting deep enough to break a recursive parser or printer
        deep: () =>
          JSON.stringify(setPath(base, 'tool_input.nested', 0)).replace(
            '"nested":0',
            `"nested":${'['.repeat(depth)}${']'.repeat(depth)}`,
          ),
        'duplicate-key': () =>
          text.replace(/}$/, `,"agent_id":${JSON.stringify(value)},"session_id":${JSON.stringify(garbage)}}`),
        empty: () => (cut % 2 ? '' : ' \n\t '),
      };
      return {
        label: `${how} ${event}`,
        steps: [step(event, bodies[how]!(), { CLAUDE_CODE_SESSION_ID: s.sessionId })],
      };
    },
  }));

const wrongType: fc.Arbitrary<Recipe> = fc
  .tuple(
    eventArb,
    fc.subarray(
      ID_FIELDS.concat(['tool_input', 'tool_input.timeout', 'constructor', '__proto__', 'tool_input.__proto__']),
      { minLength: 1, maxLength: 3 },
    ),
    fc.array(fc.option(jsonArb, { nil: undefined }), { minLength: 3, maxLength: 3 }),
  )
  .map(([event, fields, values]) => ({
    kind: 'wrong-type' as const,
    make(w: World, tag: string) {
      const { s, agent } = ids(w, event, tag);
      let p = basePayload(w, event, s, agent, 'psql -c "select 1"');
      fields.forEach((f, i) => {
        if (!f.endsWith('__proto__')) p = setPath(p, f, values[i]);
      });
      // `__proto__` as a JSON key: an own property to JSON.parse, a prototype to a careless copy
      let text = JSON.stringify(p);
      if (fields.includes('__proto__'))
        text = text.replace(/^\{/, '{"__proto__":{"agent_id":"polluted","tool_name":"Bash"},');
      if (fields.includes('tool_input.__proto__'))
        text = text.replace('"tool_input":{', '"tool_input":{"__proto__":{"command":"psql -d polluted"},');
      return {
        label: `${fields.join(',')} of ${event} = ${JSON.stringify(values.slice(0, fields.length))?.slice(0, 80)}`,
        steps: [step(event, text, { CLAUDE_CODE_SESSION_ID: s.sessionId })],
      };
    },
  }));

/** Sizes past each limit: Claude Code's 10,000-character strings, the 256-character id, the 1 MiB stdin, the broker's 4 MiB request. */
const HUGE = [257, 10_001, 200_000, 1_100_000, 4_500_000];
const huge: fc.Arbitrary<Recipe> = fc
  .tuple(
    fc.constantFrom<HookEvent>('pre-tool-use', 'pre-tool-use', 'subagent-start', 'user-prompt-submit'),
    fc.constantFrom('session_id', 'agent_id', 'tool_input.command', 'tool_input.description', 'cwd', 'extra'),
    fc.constantFrom(...HUGE),
    fc.constantFrom('x', "'", 'é', '\\'),
  )
  .map(([event, field, size, unit]) => ({
    kind: 'huge' as const,
    make(w: World, tag: string) {
      const { s, agent } = ids(w, event, tag);
      const value = unit.repeat(size);
      return {
        label: `${field} of ${size} × ${JSON.stringify(unit)} in ${event}`,
        steps: [
          step(event, setPath(basePayload(w, event, s, agent, 'echo ok'), field, value), {
            CLAUDE_CODE_SESSION_ID: s.sessionId,
          }),
        ],
      };
    },
  }));

/** Control characters, NUL, surrogates and friends in ids, paths and commands; metachars the same way. */
function inField(kind: 'control' | 'metachar', valueArb: fc.Arbitrary<string>): fc.Arbitrary<Recipe> {
  return fc
    .tuple(
      eventArb,
      fc.constantFrom(
        'session_id',
        'agent_id',
        'agent_id',
        'cwd',
        'tool_input.command',
        'tool_input.command',
        'agent_type',
        'transcript_path',
      ),
      valueArb,
      fc.boolean(),
      fc.boolean(),
    )
    .map(([event, field, raw, replace, noProjectDir]) => ({
      kind,
      make(w: World, tag: string) {
        const { s, agent } = ids(w, event, tag);
        const base = basePayload(w, event, s, agent, 'psql -c "select 1"');
        const v = raw.replaceAll('{victim}', w.victim);
        const old = field.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], base);
        const value = replace ? v : `${typeof old === 'string' ? old : ''}${v}`;
        // An event that ends or stops what it names gets ids of its own: a tag keeps them apart from every other scenario's.
        const retires =
          (event === 'subagent-stop' || event === 'session-end' || event === 'session-start') &&
          (field === 'session_id' || field === 'agent_id');
        const p = setPath(base, field, retires ? `${value}-${tag}` : value);
        // Claude Code always sets CLAUDE_PROJECT_DIR; without it the payload's cwd decides the project.
        const env = noProjectDir && field === 'cwd' ? { CLAUDE_PROJECT_DIR: undefined } : {};
        return {
          label: `${JSON.stringify(v).slice(0, 60)} ${replace ? 'as' : 'after'} ${field} of ${event}${env.CLAUDE_PROJECT_DIR === undefined && 'CLAUDE_PROJECT_DIR' in env ? ' (no CLAUDE_PROJECT_DIR)' : ''}`,
          steps: [step(event, p, env)],
        };
      },
    }));
}

const eventMismatch: fc.Arbitrary<Recipe> = fc
  .tuple(
    fc.constantFrom<HookEvent>(...SIX_EVENTS),
    fc.oneof(
      fc.constantFrom<string>(...SIX_EVENTS),
      fc.constantFrom(
        'PreToolUse',
        'pre_tool_use',
        'pre-tool-use ',
        'post-tool-use',
        'stop',
        '',
        '../pre-tool-use',
        'subagent-start;id',
      ),
    ),
    fc.oneof(fc.constantFrom(...Object.values(EVENT_NAMES), 'PostToolUse', 'Stop', 'Notification'), jsonArb),
  )
  .map(([shape, cli, name]) => ({
    kind: 'event-mismatch' as const,
    make(w: World, tag: string) {
      const asEvent = isSix(cli) ? cli : shape;
      const { s } = ids(w, asEvent, tag);
      const agent = ids(w, asEvent, tag).agent ?? ids(w, shape, tag).agent;
      const p = { ...basePayload(w, shape, s, agent, 'psql -c "select 1"'), hook_event_name: name };
      return {
        label: `a ${shape} payload (hook_event_name ${JSON.stringify(name).slice(0, 30)}) sent as \`agent hook ${JSON.stringify(cli)}\``,
        steps: [step(cli, p)],
      };
    },
  }));

/** Replayed and cross-session requests: each a short sequence whose later steps see what the earlier ones did. */
/** Pairs of ids a careless encoder, collation or name-maker would merge: each must still get a branch of its own. */
const CONFUSABLE: [string, string][] = [
  ['\ud800', '\ud801'],
  ['\ud800', '\ufffd'],
  ['e\u0301', '\u00e9'],
  ['A', 'a'],
  [' ', ''],
  ['\u200b', ''],
  ["'", '"'],
  ['_', '-'],
  ['.', '/'],
  ['\u0130', 'i'],
  ['x'.repeat(200), 'x'.repeat(199) + 'y'],
];

const replay: fc.Arbitrary<Recipe> = fc
  .tuple(
    fc.constantFrom(
      'start-twice',
      'cross-session',
      'after-stop',
      'stop-twice',
      'after-session-end',
      'other-agents-rewrite',
      'own-rewrite',
      'env-session-differs',
      'confusable-ids',
    ),
    hexArb(6),
    fc.constantFrom(...CONFUSABLE),
  )
  .map(([how, hex, twist]) => ({
    kind: 'replay' as const,
    make(w: World, tag: string) {
      const me = `a${hex}${tag}`;
      const s = { ...w.a, sessionId: `${w.a.sessionId}-${tag}` };
      const other = { ...w.b, sessionId: `${w.b.sessionId}-${tag}` };
      const pre = (ss: SessionCtx, a: string, cmd = 'psql -c "select 1"') => basePayload(w, 'pre-tool-use', ss, a, cmd);
      const steps: Record<string, () => Step[]> = {
        'start-twice': () => [
          step('subagent-start', subagentStartOf(w, s, me)),
          step('subagent-start', subagentStartOf(w, s, me)),
          step('pre-tool-use', pre(s, me)),
        ],
        // session A's agent, sent with session B's ids: B's own branch for that agent, never A's
        'cross-session': () => [
          step('subagent-start', subagentStartOf(w, s, me)),
          step('pre-tool-use', pre(other, me)),
          step('pre-tool-use', pre(w.b, w.a1)),
        ],
        'after-stop': () => [
          step('subagent-start', subagentStartOf(w, s, me)),
          step('subagent-stop', subagentStop(s, me)),
          step('pre-tool-use', pre(s, me)),
        ],
        'stop-twice': () => [
          step('subagent-start', subagentStartOf(w, s, me)),
          step('subagent-stop', subagentStop(s, me)),
          step('subagent-stop', subagentStop(s, me)),
        ],
        'after-session-end': () => [
          step('subagent-start', subagentStartOf(w, s, me)),
          step('session-end', sessionEnd(s)),
          step('pre-tool-use', pre(s, me)),
          step('subagent-start', subagentStartOf(w, s, me)),
        ],
        // a1's routed form, sent by another agent: a hand-written launcher to that agent
        'other-agents-rewrite': () => [
          step(
            'pre-tool-use',
            pre(
              s,
              me,
              rewriteCommand('psql -c "select 1"', {
                launcher: w.launcher,
                agentId: w.a1,
                projectDir: w.projectDir,
                shell: w.shell,
                branch: 'x',
              }),
            ),
          ),
        ],
        // its own routed form again (a retried tool call): left alone only if it is exactly what the hook writes
        'own-rewrite': () => [
          step(
            'pre-tool-use',
            pre(
              w.a,
              w.a1,
              `${rewriteCommand('psql -c "select 1"', { launcher: w.launcher, agentId: w.a1, projectDir: w.projectDir, shell: w.shell, branch: 'pgx_forged' })}`,
            ),
          ),
        ],
        'env-session-differs': () => [step('pre-tool-use', pre(other, me), { CLAUDE_CODE_SESSION_ID: s.sessionId })],
        // two agents whose ids differ only by one character a careless encoder or name-maker would merge
        'confusable-ids': () => [
          step('subagent-start', subagentStartOf(w, s, `${me}${twist[0]}`)),
          step('subagent-start', subagentStartOf(w, s, `${me}${twist[1]}`)),
          step('pre-tool-use', pre(s, `${me}${twist[0]}`)),
          step('pre-tool-use', pre(s, `${me}${twist[1]}`)),
        ],
      };
      const distinct = how === 'confusable-ids' ? { distinct: [0, 1] } : {};
      return {
        label: how === 'confusable-ids' ? `${how} (${JSON.stringify(twist)})` : how,
        steps: steps[how]!(),
        ...distinct,
      };
    },
  }));

const subagentStartOf = (w: World, s: SessionCtx, a: string) => basePayload(w, 'subagent-start', s, a, '');

/**
 * The corpus for a world: `size` scenarios drawn from one seed. The same seed gives the same recipes in every run
 * and every transport (the world's ids differ; the shapes do not).
 */
export function hostileCorpus(w: World, opts: { seed: number; size: number }): Scenario[] {
  const arb = fc.oneof(
    { arbitrary: malformed, weight: 3 },
    { arbitrary: wrongType, weight: 3 },
    { arbitrary: huge, weight: 1 },
    { arbitrary: inField('control', controlArb), weight: 2 },
    { arbitrary: inField('metachar', metacharArb), weight: 4 },
    { arbitrary: eventMismatch, weight: 2 },
    { arbitrary: replay, weight: 2 },
  );
  return fc.sample(arb, { seed: opts.seed, numRuns: opts.size }).map((r, i) => {
    const made = r.make(w, String(i));
    const bytes = made.steps.reduce((n, s) => n + s.stdin.length, 0);
    return { id: `${r.kind}#${i}`, kind: r.kind, label: made.label, steps: made.steps, distinct: made.distinct, bytes };
  });
}

// ---- the checks every answer must pass ----

const text10k = z.string().max(10_000); // Claude Code caps a hook's strings at 10,000 characters
/** What Claude Code accepts as hook JSON for each event, narrowed to what pgx may say: never allow, never block a stop. */
const HOOK_SPECIFIC: Record<HookEvent, z.ZodType | undefined> = {
  'pre-tool-use': z.strictObject({
    hookEventName: z.literal('PreToolUse'),
    permissionDecision: z.optional(z.enum(['deny', 'ask'])),
    permissionDecisionReason: z.optional(text10k),
    updatedInput: z.optional(z.record(z.string(), z.unknown())),
    additionalContext: z.optional(text10k),
  }),
  'subagent-start': z.strictObject({
    hookEventName: z.literal('SubagentStart'),
    additionalContext: z.optional(text10k),
  }),
  'session-start': z.strictObject({ hookEventName: z.literal('SessionStart'), additionalContext: z.optional(text10k) }),
  'user-prompt-submit': z.strictObject({
    hookEventName: z.literal('UserPromptSubmit'),
    additionalContext: z.optional(text10k),
  }),
  'subagent-stop': undefined,
  'session-end': undefined,
};
const outputSchema = (event: HookEvent) =>
  z.strictObject({
    systemMessage: z.optional(text10k),
    ...(HOOK_SPECIFIC[event] ? { hookSpecificOutput: z.optional(HOOK_SPECIFIC[event]!) } : {}),
  });

/** A node stack trace line. */
const STACK = /^\s+at .+(:\d+:\d+\)?|\(native\))$/m;

const parsePayload = (stdin: string | Buffer): Payload | undefined => {
  try {
    const v: unknown = JSON.parse(stdin.toString());
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Payload) : undefined;
  } catch {
    return undefined;
  }
};

/** The active branch of an identity, by the test's own look at the registry (undefined: none). */
async function activeBranch(w: World, sessionId: string, agentId: string): Promise<string | undefined> {
  const rows = await sql<{ name: string }>(
    `SELECT name FROM pgx_branch WHERE project = $1 AND host = $2 AND session_id = $3 AND agent_id = $4 AND state = 'active'`,
    [w.p.name, w.p.host, sessionId, agentId],
    'pgx_registry',
  );
  if (rows.length > 1)
    throw new Error(`${rows.length} active branches for one identity: ${rows.map((r) => r.name).join(', ')}`);
  return rows[0]?.name;
}

/** Where the hook decides the project from: CLAUDE_PROJECT_DIR, else the payload's cwd (relative to the hook's). */
function inProject(w: World, env: NodeJS.ProcessEnv, payload: Payload | undefined): boolean {
  if (env.CLAUDE_PROJECT_DIR) return true;
  const cwd = payload?.cwd;
  return typeof cwd !== 'string' || cwd === '' || cwd === w.p.dir || !cwd.startsWith('/');
}

/**
 * Every answer, whatever the transport: nothing, or one JSON object Claude Code accepts for the event; never an
 * allow; no password, no stack trace; a subagent's Bash rewritten to exactly its own active branch, or denied.
 * Returns the answer's class (for comparing transports): what Claude Code would do with it.
 */
export async function checkAnswer(w: World, sc: Scenario, st: Step, a: Answer): Promise<string> {
  const where = `${sc.id} (${sc.label}), step \`${JSON.stringify(st.event)}\``;
  const fail = (why: string): never => {
    throw new Error(`${where}: ${why}\nstdout: ${a.stdout.slice(0, 2000)}\nstderr: ${a.stderr.slice(0, 2000)}`);
  };
  if (a.signal) fail(`killed by ${a.signal}`);
  if (STACK.test(a.stderr)) fail('a stack trace on stderr');
  for (const s of knownSecrets()) if (a.stdout.includes(s) || a.stderr.includes(s)) fail('a password in the output');
  if (!isSix(st.event)) {
    // Not an event pgx answers: a usage error (exit 2, documented) or the broker's "not mine"; never hook JSON.
    if (a.stdout !== '') fail('printed something for an unknown event');
    if (a.fallback === undefined && a.status !== 2) fail(`exit ${a.status} for an unknown event (expected 2, usage)`);
    return 'not-an-event';
  }
  if (a.fallback !== undefined) fail(`the broker's work declined a hook event: ${a.fallback}`);
  if (a.status !== 0) fail(`exit ${a.status}`);
  if (a.stdout === '') return checkSilence(w, st);
  if (!a.stdout.startsWith('{') || a.stdout.trimEnd().includes('\n')) fail('stdout is not one JSON object on one line');
  let out: Payload;
  try {
    out = JSON.parse(a.stdout) as Payload;
  } catch {
    return fail('stdout is not JSON');
  }
  const valid = outputSchema(st.event).safeParse(out);
  if (!valid.success)
    fail(
      `not hook JSON Claude Code accepts from pgx: ${valid.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const hso = out.hookSpecificOutput as Payload | undefined;
  if (st.event === 'pre-tool-use') return checkPreToolUse(w, st, hso, fail);
  if (st.event === 'subagent-start') return checkSubagentStart(w, st, hso, fail);
  return hso?.additionalContext ? 'context' : out.systemMessage ? 'system-message' : 'nothing';
}

/** Nothing printed: for a subagent's Bash in the project, only when the command is exactly its own routed form. */
async function checkSilence(w: World, st: Step): Promise<string> {
  const p = parsePayload(st.stdin);
  const env = { ...hookEnv(w.p, {}), ...st.env };
  if (st.event !== 'pre-tool-use' || !p || p.tool_name !== 'Bash' || p.agent_id === undefined || !inProject(w, env, p))
    return 'nothing';
  const command = (p.tool_input as Payload | undefined)?.command;
  const branch =
    typeof p.session_id === 'string' && typeof p.agent_id === 'string'
      ? await activeBranch(w, p.session_id, p.agent_id).catch(() => undefined)
      : undefined;
  if (
    typeof command === 'string' &&
    branch &&
    typeof p.agent_id === 'string' &&
    isRouted(command, params(w, p.agent_id, branch))
  )
    return 'already-routed';
  throw new Error(
    `a subagent's Bash went through with no answer (neither rewritten nor denied): ${JSON.stringify(p).slice(0, 300)}`,
  );
}

const params = (w: World, agentId: string, branch: string): RewriteParams => ({
  launcher: w.launcher,
  agentId,
  projectDir: w.projectDir,
  shell: w.shell,
  branch,
});

async function checkPreToolUse(
  w: World,
  st: Step,
  hso: Payload | undefined,
  fail: (why: string) => never,
): Promise<string> {
  if (hso?.permissionDecision === 'deny') {
    if (hso.updatedInput !== undefined) fail('a deny that also rewrites');
    return 'deny';
  }
  if (hso?.updatedInput === undefined) return hso?.additionalContext ? 'context' : 'nothing';
  const p = parsePayload(st.stdin);
  // Only a subagent's Bash is rewritten, to its own active branch, and exactly as pgx's rewrite writes it.
  if (!p || p.tool_name !== 'Bash' || typeof p.agent_id !== 'string' || typeof p.session_id !== 'string')
    return fail('a rewrite of something that is not a subagent Bash call');
  if (!idSchema.safeParse(p.agent_id).success || !idSchema.safeParse(p.session_id).success)
    return fail('a rewrite for ids pgx does not accept');
  const input = p.tool_input as Payload;
  const command = input.command;
  if (typeof command !== 'string') return fail('a rewrite of a call with no command string');
  const updated = hso.updatedInput as Payload;
  const marker = /; exit # pgx-routed (\S+)\n/.exec(String(updated.command))?.[1];
  const own = await activeBranch(w, p.session_id, p.agent_id);
  if (!own)
    fail(
      `rewritten to ${marker}, but the identity (${JSON.stringify(p.session_id).slice(0, 80)}, ${JSON.stringify(p.agent_id).slice(0, 80)}) has no active branch`,
    );
  if (marker !== own) fail(`rewritten to ${marker}, not to its own branch ${own}`);
  const expected = rewriteCommand(command, params(w, p.agent_id, own!));
  if (updated.command !== expected) fail('the rewrite is not exactly what rewrite.ts writes for this agent');
  // An independent reading of the shell words (shell-quote): the launcher gets exactly these arguments.
  const suffix = `; exit # pgx-routed ${own}\n${command}`;
  const words = shParse(expected.slice(0, -suffix.length), (k) => `\${${k}}`);
  same(
    words,
    [w.launcher, 'agent', 'exec', '--agent', p.agent_id, '--cwd', w.projectDir, '--', w.shell, '-c', command],
    "the launcher's arguments as a shell reads them",
  );
  // Every other field of the tool input is sent back (updatedInput replaces the whole input).
  const { command: _c, ...rest } = updated;
  const { command: _o, ...was } = JSON.parse(st.stdin.toString()).tool_input as Payload;
  const protoless = (o: Payload) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== '__proto__'));
  same(protoless(rest), protoless(was), 'the tool input sent back');
  return hso.permissionDecision === 'ask' ? 'rewrite-ask' : 'rewrite';
}

function same(actual: unknown, expected: unknown, what: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    throw new Error(
      `${what}: ${JSON.stringify(actual).slice(0, 500)} is not ${JSON.stringify(expected).slice(0, 500)}`,
    );
}

/** The branch a SubagentStart's answer names, if it names one. */
export function namedBranch(stdout: string): string | undefined {
  return /your own PostgreSQL database branch \\"([^"\\]+)\\"/.exec(stdout)?.[1];
}

async function checkSubagentStart(
  w: World,
  st: Step,
  hso: Payload | undefined,
  fail: (why: string) => never,
): Promise<string> {
  const context = String(hso?.additionalContext ?? '');
  const named = /your own PostgreSQL database branch "([^"]+)"/.exec(context)?.[1];
  if (!named) return 'context';
  const p = parsePayload(st.stdin)!;
  const own =
    typeof p.session_id === 'string' && typeof p.agent_id === 'string'
      ? await activeBranch(w, p.session_id, p.agent_id)
      : undefined;
  if (named !== own) fail(`SubagentStart named ${named}, the identity's active branch is ${own}`);
  return 'branch';
}

// ---- databases: nothing but pgx's own is created, altered or dropped ----

export interface DatabaseRow {
  datname: string;
  oid: string;
  datallowconn: boolean;
  datistemplate: boolean;
  datconnlimit: number;
  comment: string | null;
  settings: string[] | null;
}

export async function databases(): Promise<Map<string, DatabaseRow>> {
  const rows =
    await sql<DatabaseRow>(`SELECT d.datname, d.oid::text, d.datallowconn, d.datistemplate, d.datconnlimit, shobj_description(d.oid, 'pg_database') AS comment,
      (SELECT array_agg(c ORDER BY c) FROM pg_db_role_setting s, unnest(s.setconfig) c WHERE s.setdatabase = d.oid) AS settings
    FROM pg_database d`);
  return new Map(rows.map((r) => [r.datname, r]));
}

/** The user's database's content: its rows, in order. */
export async function victimContent(name: string): Promise<string> {
  return JSON.stringify(await sql(`SELECT * FROM t ORDER BY id`, [], name));
}

const pgxOwn = (r: DatabaseRow | undefined) =>
  !!r && (r.datname === 'pgx_registry' || (r.comment ?? '').startsWith('pgx:'));

/** Compares two snapshots: a database that is not pgx's (by its stamp) was neither created, changed nor dropped. */
export function foreignChanges(before: Map<string, DatabaseRow>, after: Map<string, DatabaseRow>): string[] {
  const problems: string[] = [];
  for (const [name, was] of before) {
    const now = after.get(name);
    if (pgxOwn(was)) continue;
    if (!now) problems.push(`dropped: ${name}`);
    else if (JSON.stringify(now) !== JSON.stringify(was))
      problems.push(`changed: ${name}: ${JSON.stringify(was)} → ${JSON.stringify(now)}`);
  }
  for (const [name, now] of after)
    if (!before.has(name) && !pgxOwn(now)) problems.push(`created, unstamped: ${name} ${JSON.stringify(now)}`);
  return problems;
}
