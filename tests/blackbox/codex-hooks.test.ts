// `pgx agent codex-hook <event>` (the built CLI) with Codex-shaped payloads, against the real test server: the allow
// question over every permission_mode (only bypassPermissions gets allow + updatedInput; everywhere else a deny that
// hands over the routed command, which then comes back unchanged and runs on the branch), the typed-launcher check,
// the lifecycle, and no password in any output. The parent's own commands, routed to the session's branch when
// session_branch is on (decision 205), the same way, and `agent exec --fail-open`, which runs a session's command
// unrouted, loudly, when its branch can't be had. The real binary: tests/e2e/codex-*.test.ts.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, makeProject, pgInfo, runPgx, runPgxAsync, sql } from '../helpers/pgx.js';
import { bash, launcherReal, lsBranches, publicTables } from '../helpers/hooks.js';
import { shellQuote } from '../../src/lib/shell.js';
import { routedCommandIn } from '../../src/hooks/codex/handlers.js';

type Project = ReturnType<typeof makeProject>;

async function codexHook(
  event: string,
  payload: Record<string, unknown> | string,
  p: Project,
  extraEnv: NodeJS.ProcessEnv = {},
) {
  const input = typeof payload === 'string' ? payload : JSON.stringify(payload);
  // Codex gives a hook no project variable: the project is the payload's cwd.
  const r = await runPgxAsync(['agent', 'codex-hook', event], {
    cwd: p.dir,
    env: { ...p.env, SHELL: '/bin/bash', ...extraEnv },
    input,
  });
  expect(r.status, r.stderr).toBe(0);
  const pw = pgInfo().password;
  expect(r.stdout.includes(pw) || r.stderr.includes(pw), 'a password in hook output').toBe(false);
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : undefined };
}

const base = (p: Project, sessionId: string) => ({
  session_id: sessionId,
  cwd: p.dir,
  transcript_path: null,
  turn_id: randomUUID(),
  model: 'fake-model',
});
const preBash = (p: Project, sessionId: string, command: string, o: { agentId?: string; mode?: string } = {}) => ({
  ...base(p, sessionId),
  hook_event_name: 'PreToolUse',
  ...(o.agentId ? { agent_id: o.agentId, agent_type: 'default' } : {}),
  ...(o.mode !== undefined ? { permission_mode: o.mode } : {}),
  tool_name: 'Bash',
  tool_input: { command },
  tool_use_id: `call_${randomUUID()}`,
});

const routedFrom = (reason: string) => routedCommandIn(reason)!;

/** Every permission_mode a Codex payload may carry: codex exec's, Claude-style names, an unknown one, and none. */
const MODES = [
  'bypassPermissions',
  'default',
  'acceptEdits',
  'plan',
  'dontAsk',
  'auto',
  'on-request',
  'BYPASSPERMISSIONS',
  '',
  undefined,
];

describe('Codex PreToolUse: the allow question', () => {
  it('only bypassPermissions gets allow + updatedInput; every other mode a deny with the routed command, which then passes unchanged and runs on the branch', async () => {
    const p = makeProject();
    const sessionId = randomUUID();
    const agentId = randomUUID();
    const start = await codexHook(
      'subagent-start',
      {
        ...base(p, sessionId),
        hook_event_name: 'SubagentStart',
        agent_id: agentId,
        agent_type: 'default',
        source: 'startup',
      },
      p,
    );
    const branch = /branch "([^"]+)"/.exec(start.json.hookSpecificOutput.additionalContext)![1]!;
    const original = `psql -X -Atc 'select current_database()'`;

    const bypass = await codexHook(
      'pre-tool-use',
      preBash(p, sessionId, original, { agentId, mode: 'bypassPermissions' }),
      p,
    );
    const out = bypass.json.hookSpecificOutput;
    expect(out.permissionDecision).toBe('allow');
    expect(out.updatedInput.command).toBe(
      `${shellQuote(launcherReal())} agent exec --agent ${agentId} --cwd ${p.dir} -- /bin/bash -c ${shellQuote(original)}; exit # pgx-routed ${branch}\n${original}`,
    );
    expect(
      (await bash(out.updatedInput.command, { cwd: p.dir, env: { ...p.env, SHELL: '/bin/bash' } })).stdout.trim(),
    ).toBe(branch);

    // PGX_CODEX_ALLOW=never: stricter only, the deny even in bypassPermissions
    const never = await codexHook(
      'pre-tool-use',
      preBash(p, sessionId, original, { agentId, mode: 'bypassPermissions' }),
      p,
      { PGX_CODEX_ALLOW: 'never' },
    );
    expect(never.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(routedFrom(never.json.hookSpecificOutput.permissionDecisionReason)).toBe(out.updatedInput.command);

    // every value Codex sends outside `codex exec` (Claude-style names), an unknown one, and none at all
    for (const mode of [
      'default',
      'acceptEdits',
      'plan',
      'dontAsk',
      'auto',
      'on-request',
      'BYPASSPERMISSIONS',
      '',
      undefined,
    ]) {
      const r = await codexHook('pre-tool-use', preBash(p, sessionId, original, { agentId, mode }), p);
      const o = r.json.hookSpecificOutput;
      expect(o.permissionDecision, `mode ${mode}`).toBe('deny');
      expect(o.updatedInput, `mode ${mode}`).toBeUndefined();
      const routed = routedFrom(o.permissionDecisionReason);
      expect(routed).toBe(out.updatedInput.command); // the same form the allow would have run
      // the model runs it: it passes the hook unchanged (Codex's own approval then decides), and lands on the branch
      const again = await codexHook('pre-tool-use', preBash(p, sessionId, routed, { agentId, mode }), p);
      expect(again.stdout, `mode ${mode}`).toBe('');
      expect((await bash(routed, { cwd: p.dir, env: { ...p.env, SHELL: '/bin/bash' } })).stdout.trim()).toBe(branch);
    }
  });

  it("a hand-written launcher, another agent's routed form, or a bare exit is refused in every mode", async () => {
    const p = makeProject();
    const sessionId = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    const routedForB = routedFrom(
      (await codexHook('pre-tool-use', preBash(p, sessionId, 'true', { agentId: b, mode: 'default' }), p)).json
        .hookSpecificOutput.permissionDecisionReason,
    );
    for (const mode of ['bypassPermissions', 'default']) {
      for (const command of [
        `${shellQuote(launcherReal())} agent exec --agent ${a} --cwd ${p.dir} -- psql -c 'select 1'`,
        routedForB,
        'pgx agent exec --id x -- psql',
        'true; exit',
      ]) {
        const r = await codexHook('pre-tool-use', preBash(p, sessionId, command, { agentId: a, mode }), p);
        expect(r.json?.hookSpecificOutput?.permissionDecision, `${mode}: ${command}`).toBe('deny');
      }
    }
    // the parent with session_branch off: a typed launcher is refused, anything else passes untouched (Codex judges
    // it). (Until decision 205 this held with session_branch on too; on, the parent is routed: the tests below.)
    const off = makeProject({ toml: '[agent]\nsession_branch = false\n' });
    expect(
      (
        await codexHook(
          'pre-tool-use',
          preBash(off, sessionId, `pgx agent exec --agent ${a} -- psql`, { mode: 'bypassPermissions' }),
          off,
        )
      ).json.hookSpecificOutput.permissionDecision,
    ).toBe('deny');
    expect(
      (
        await codexHook(
          'pre-tool-use',
          preBash(off, sessionId, 'psql -c "select 1"', { mode: 'bypassPermissions' }),
          off,
        )
      ).stdout,
    ).toBe('');
  });

  it('the parent with session_branch off, in every permission_mode Codex may send: never an allow, never an updatedInput; a typed launcher denied', async () => {
    const p = makeProject({ toml: '[agent]\nsession_branch = false\n' });
    const sessionId = randomUUID();
    for (const mode of MODES) {
      const plain = await codexHook('pre-tool-use', preBash(p, sessionId, `psql -X -Atc 'select 1'`, { mode }), p);
      expect(plain.stdout, `mode ${mode}`).toBe(''); // not routed: Codex's own approval judges it as typed
      const typed = await codexHook(
        'pre-tool-use',
        preBash(p, sessionId, `pgx agent exec --session ${sessionId} -- psql`, { mode }),
        p,
      );
      expect(typed.json.hookSpecificOutput.permissionDecision, `mode ${mode}`).toBe('deny');
      expect(typed.json.hookSpecificOutput.updatedInput, `mode ${mode}`).toBeUndefined();
    }
    expect(await lsBranches(p)).toEqual([]); // and no session branch was made for it
  });

  it('fails closed for a subagent: an invalid payload or a server it cannot reach is a deny with a reason', async () => {
    const p = makeProject();
    const bad = await codexHook(
      'pre-tool-use',
      { ...preBash(p, randomUUID(), 'psql', { agentId: 'x\u0001y', mode: 'bypassPermissions' }) },
      p,
    );
    expect(bad.json.hookSpecificOutput.permissionDecision).toBe('deny');
    const down = makeProject();
    down.env.PGX_DATABASE_URL = 'postgresql://nobody@127.0.0.1:1/postgres'; // nobody listens on port 1
    const r = await codexHook(
      'pre-tool-use',
      preBash(down, randomUUID(), 'psql', { agentId: randomUUID(), mode: 'bypassPermissions' }),
      down,
    );
    expect(r.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(r.json.hookSpecificOutput.permissionDecisionReason).toMatch(
      /could not ensure this subagent's own database branch/,
    );
  });
});

describe('Codex lifecycle', () => {
  it('SubagentStart makes the branch and says so; SubagentStop retires it; the source is untouched', async () => {
    const src = `src_${Math.random().toString(36).slice(2, 10)}`;
    await sql(`CREATE DATABASE ${src}`);
    try {
      await sql('CREATE TABLE rows (x int)', [], src);
      const p = makeProject({ source: src });
      const sessionId = randomUUID();
      const agentId = randomUUID();
      const start = await codexHook(
        'subagent-start',
        { ...base(p, sessionId), hook_event_name: 'SubagentStart', agent_id: agentId, agent_type: 'default' },
        p,
      );
      const ctx: string = start.json.hookSpecificOutput.additionalContext;
      expect(ctx).toMatch(/own PostgreSQL database branch/);
      expect(ctx).toMatch(/run that exact command/);
      const branch = /branch "([^"]+)"/.exec(ctx)![1]!;
      const pre = await codexHook(
        'pre-tool-use',
        preBash(p, sessionId, `psql -X -qc 'create table mine (x int)'`, { agentId, mode: 'bypassPermissions' }),
        p,
      );
      expect(
        (
          await bash(pre.json.hookSpecificOutput.updatedInput.command, {
            cwd: p.dir,
            env: { ...p.env, SHELL: '/bin/bash' },
          })
        ).status,
      ).toBe(0);
      expect(
        await codexHook(
          'subagent-stop',
          {
            ...base(p, sessionId),
            hook_event_name: 'SubagentStop',
            agent_id: agentId,
            agent_type: 'default',
            stop_hook_active: false,
            last_assistant_message: 'done',
            agent_transcript_path: null,
          },
          p,
        ),
      ).toMatchObject({ stdout: '' });
      const row = (await lsBranches(p)).find((b) => b.name === branch);
      expect(row?.state).not.toBe('active');
      expect(
        (await sql("SELECT tablename FROM pg_tables WHERE schemaname = 'public'", [], src)).map((r) => r.tablename),
      ).toEqual(['rows']);
    } finally {
      await sql(`DROP DATABASE IF EXISTS ${src} WITH (FORCE)`).catch(() => undefined);
    }
  });
});

describe('the Codex parent with session_branch on (decision 205): its commands go to the session branch', () => {
  /** The environment Codex 0.171.0 gives the parent's shell command (measured, decision 205): the thread id is the session's. */
  const codexShell = (p: Project, sessionId: string, extra: NodeJS.ProcessEnv = {}) => ({
    ...p.env,
    SHELL: '/bin/bash',
    CODEX_THREAD_ID: sessionId,
    CODEX_SESSION_ID: sessionId,
    ...extra,
  });

  it('bypassPermissions: allow + the session form; every other mode: a deny carrying that command, which passes back untouched and lands on the session branch', async () => {
    const src = `src_${Math.random().toString(36).slice(2, 10)}`;
    await sql(`CREATE DATABASE ${src}`);
    try {
      await sql('CREATE TABLE items (x int)', [], src);
      const p = makeProject({ source: src, toml: '[agent]\nsession_branch = true\n' });
      const sessionId = randomUUID();
      const original = `psql -X -Atc 'select current_database()'`;
      const bypass = await codexHook('pre-tool-use', preBash(p, sessionId, original, { mode: 'bypassPermissions' }), p);
      const out = bypass.json.hookSpecificOutput;
      expect(out.permissionDecision).toBe('allow');
      const own = (await lsBranches(p)).filter((b) => b.kind === 'session');
      expect(own.map((b) => [b.session_id, b.agent_id, b.state])).toEqual([[sessionId, null, 'active']]);
      const branch: string = own[0]!.name;
      expect(out.updatedInput.command).toBe(
        `${shellQuote(launcherReal())} agent exec --session ${sessionId} --fail-open --cwd ${p.dir} -- /bin/bash -c ${shellQuote(original)}; exit # pgx-routed ${branch}\n${original}`,
      );
      const ran = await bash(out.updatedInput.command, { cwd: p.dir, env: codexShell(p, sessionId) });
      expect([ran.status, ran.stdout.trim(), ran.stderr]).toEqual([0, branch, '']); // routed: no warning

      for (const mode of MODES.filter((m) => m !== 'bypassPermissions')) {
        const r = await codexHook('pre-tool-use', preBash(p, sessionId, original, { mode }), p);
        const o = r.json.hookSpecificOutput;
        expect(o.permissionDecision, `mode ${mode}`).toBe('deny'); // never an allow outside bypassPermissions
        expect(o.updatedInput, `mode ${mode}`).toBeUndefined();
        const routed = routedFrom(o.permissionDecisionReason);
        expect(routed, `mode ${mode}`).toBe(out.updatedInput.command);
        // the model runs it: it passes the hook untouched (Codex's approval then judges it) and lands on the branch
        expect(
          (await codexHook('pre-tool-use', preBash(p, sessionId, routed, { mode }), p)).stdout,
          `mode ${mode}`,
        ).toBe('');
        expect((await bash(routed, { cwd: p.dir, env: codexShell(p, sessionId) })).stdout.trim(), `mode ${mode}`).toBe(
          branch,
        );
      }
      // PGX_CODEX_ALLOW=never: the deny in bypassPermissions too
      const never = await codexHook('pre-tool-use', preBash(p, sessionId, original, { mode: 'bypassPermissions' }), p, {
        PGX_CODEX_ALLOW: 'never',
      });
      expect(never.json.hookSpecificOutput.permissionDecision).toBe('deny');

      // what the parent makes is on the session branch, not the source
      const make = await codexHook(
        'pre-tool-use',
        preBash(p, sessionId, `psql -X -v ON_ERROR_STOP=1 -qc 'create table parent_mark (x int)'`, { mode: 'default' }),
        p,
      );
      const makeRouted = routedFrom(make.json.hookSpecificOutput.permissionDecisionReason);
      // run from Codex's shell before it came back through the hook: no ticket yet, so exec refuses it (exit 6)
      expect((await bash(makeRouted, { cwd: p.dir, env: codexShell(p, sessionId) })).status).toBe(6);
      expect((await codexHook('pre-tool-use', preBash(p, sessionId, makeRouted, { mode: 'default' }), p)).stdout).toBe(
        '',
      );
      expect((await bash(makeRouted, { cwd: p.dir, env: codexShell(p, sessionId) })).status).toBe(0);
      expect(await publicTables(branch)).toEqual(['items', 'parent_mark']);
      expect(await publicTables(src)).toEqual(['items']);
      // one session branch all along
      expect((await lsBranches(p)).map((b) => b.name)).toEqual([branch]);
    } finally {
      await sql(`DROP DATABASE IF EXISTS ${src} WITH (FORCE)`).catch(() => undefined);
    }
  });

  it("a typed launcher, another session's routed form and a bare exit are refused in every mode; a hand-typed routed exec is refused by exec's ticket check", async () => {
    const p = makeProject();
    const [sessionId, other] = [randomUUID(), randomUUID()];
    const otherForm = routedFrom(
      (await codexHook('pre-tool-use', preBash(p, other, 'true', { mode: 'default' }), p)).json.hookSpecificOutput
        .permissionDecisionReason,
    );
    for (const mode of MODES) {
      for (const command of [
        `${shellQuote(launcherReal())} agent exec --session ${sessionId} --fail-open --cwd ${p.dir} -- psql`,
        `pgx agent exec --session ${sessionId} -- psql`,
        otherForm,
        'true; exit',
      ]) {
        const r = await codexHook('pre-tool-use', preBash(p, sessionId, command, { mode }), p);
        expect(r.json?.hookSpecificOutput?.permissionDecision, `${mode}: ${command}`).toBe('deny');
        expect(r.json.hookSpecificOutput.updatedInput).toBeUndefined();
      }
    }
    // Had the hook not run: a routed form it never wrote, from Codex's shell (CODEX_THREAD_ID), is refused by exec
    // itself and runs nothing; the one it wrote runs. (A subagent's --agent form likewise.)
    const mark = join(p.dir, 'ran');
    const written = routedFrom(
      (await codexHook('pre-tool-use', preBash(p, sessionId, 'true', { mode: 'default' }), p)).json.hookSpecificOutput
        .permissionDecisionReason,
    );
    const typed = written.replaceAll("'true'", shellQuote(`touch ${mark}`)).replace('\ntrue', `\ntouch ${mark}`);
    const agentTyped = `${shellQuote(launcherReal())} agent exec --agent ${randomUUID()} --cwd ${p.dir} -- /bin/bash -c ${shellQuote(`touch ${mark}`)}`;
    for (const cmd of [typed, agentTyped]) {
      const refused = await bash(cmd, { cwd: p.dir, env: codexShell(p, sessionId) });
      expect(refused.status, refused.stderr).toBe(6);
      expect(refused.stderr).toMatch(/its hook did not route this command/);
      expect(existsSync(mark)).toBe(false);
      // and under the sandbox's fail-open too: the refusal is never opened up
      expect(
        (await bash(cmd, { cwd: p.dir, env: codexShell(p, sessionId, { CODEX_SANDBOX_NETWORK_DISABLED: '1' }) }))
          .status,
      ).toBe(6);
      expect(existsSync(mark)).toBe(false);
    }
    expect((await codexHook('pre-tool-use', preBash(p, sessionId, written, { mode: 'default' }), p)).stdout).toBe(''); // the model runs it: the ticket
    expect((await bash(written, { cwd: p.dir, env: codexShell(p, sessionId) })).status).toBe(0);
  });

  it('the parent fails open: a server it cannot reach, or a broken .pgx.toml, answers nothing (the command runs as typed); a typed launcher is still denied', async () => {
    const down = makeProject();
    down.env.PGX_DATABASE_URL = 'postgresql://nobody@127.0.0.1:1/postgres'; // nobody listens on port 1
    const broken = makeProject();
    writeFileSync(join(broken.dir, '.pgx.toml'), '[agent]\nsession_branch = "maybe"\n');
    for (const p of [down, broken]) {
      for (const mode of ['bypassPermissions', 'default', undefined]) {
        const r = await codexHook('pre-tool-use', preBash(p, randomUUID(), `psql -X -Atc 'select 1'`, { mode }), p);
        expect(r.stdout, `${p === down ? 'down' : 'broken'} ${mode}`).toBe('');
        const typed = await codexHook(
          'pre-tool-use',
          preBash(p, randomUUID(), `pgx agent exec --session s -- psql`, { mode }),
          p,
        );
        expect(typed.json.hookSpecificOutput.permissionDecision).toBe('deny');
      }
      const log = readFileSync(join(p.home, 'agent', 'hooks.log'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { outcome: string });
      expect(new Set(log.filter((l) => !l.outcome.startsWith('denied')).map((l) => l.outcome))).toEqual(
        new Set(['error:not-subagent-bash']),
      );
    }
  });
});

describe('agent exec --session <sid> --fail-open', () => {
  const brokers: Project[] = [];
  afterAll(() => {
    for (const p of brokers) runPgx(['agent', 'broker', 'stop'], { cwd: p.dir, env: p.env });
  });

  /** Prints what the command saw: it ran, and which database libpq would use. */
  const probe = `echo ran; echo "db=\${PGDATABASE:-unset}"; exit 3`;

  it('is refused with --agent (exit 2, a hint) and without --session', async () => {
    const p = makeProject();
    const r = await runPgxAsync(['agent', 'exec', '--agent', 'a1', '--fail-open', '--', 'true'], {
      cwd: p.dir,
      env: p.env,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--fail-open does not apply to --agent/);
    expect(r.stderr).toMatch(/hint: Drop --fail-open/);
    const json = await runPgxAsync(
      ['agent', 'exec', '--agent', 'a1', '--session', 's1', '--fail-open', '--json', '--', 'true'],
      { cwd: p.dir, env: p.env },
    );
    expect(json.status).toBe(2);
    expect(JSON.parse(json.stderr).error).toMatchObject({
      code: 'USAGE',
      hint: expect.stringMatching(/--session <id> --fail-open/),
    });
    expect((await runPgxAsync(['agent', 'exec', '--fail-open', '--', 'true'], { cwd: p.dir, env: p.env })).status).toBe(
      2,
    );
    expect(
      (await runPgxAsync(['agent', 'exec', '--id', 'x', '--fail-open', '--', 'true'], { cwd: p.dir, env: p.env }))
        .status,
    ).toBe(2);
  });

  it("with a server it cannot reach: runs the command unrouted, its status passed through, with a loud warning (the light entry, the CLI's --json, the broker)", async () => {
    const p = makeProject();
    p.env.PGX_DATABASE_URL = 'postgresql://nobody:sekret-pw@127.0.0.1:1/postgres';
    p.env.PGDATABASE = 'what_it_had';
    const sessionId = randomUUID();
    const light = await runPgxAsync(
      ['agent', 'exec', '--session', sessionId, '--fail-open', '--cwd', p.dir, '--', '/bin/bash', '-c', probe],
      { cwd: p.dir, env: p.env },
    );
    expect([light.status, light.stdout]).toEqual([3, 'ran\ndb=what_it_had\n']);
    expect(light.stderr).toMatch(
      /^pgx: WARNING: this command runs unrouted, NOT on this session's database branch: pgx could not ensure the branch \(Cannot reach PostgreSQL/,
    );
    expect(light.stderr).not.toMatch(/sekret-pw/);
    const cli = await runPgxAsync(
      ['agent', 'exec', '--session', sessionId, '--fail-open', '--json', '--', '/bin/bash', '-c', probe],
      { cwd: p.dir, env: p.env },
    );
    expect([cli.status, cli.stdout]).toEqual([3, 'ran\ndb=what_it_had\n']);
    const [warning, line] = cli.stderr.trim().split('\n');
    expect(warning).toMatch(/^pgx: WARNING: this command runs unrouted/);
    expect(JSON.parse(line!)).toMatchObject({ branch: null, method: 'unrouted', status: 3, unrouted: warning });
    // through a broker (its own environment: the same unreachable server): the same answer
    const runtime = mkdtempSync(join(tmpdir(), 'pgx-run-'));
    Object.assign(p.env, { PGX_BROKER: '1', PGX_BROKER_IDLE_MS: '60000', XDG_RUNTIME_DIR: runtime });
    brokers.push(p);
    expect(runPgx(['agent', 'broker', 'start', '--json'], { cwd: p.dir, env: p.env }).status).toBe(0);
    const viaBroker = await runPgxAsync(
      ['agent', 'exec', '--session', sessionId, '--fail-open', '--cwd', p.dir, '--', '/bin/bash', '-c', probe],
      { cwd: p.dir, env: p.env },
    );
    expect([viaBroker.status, viaBroker.stdout]).toEqual([3, 'ran\ndb=what_it_had\n']);
    expect(viaBroker.stderr).toMatch(/^pgx: WARNING: this command runs unrouted/);
    const st = jsonOf(runPgx(['agent', 'broker', 'status', '--json'], { cwd: p.dir, env: p.env }));
    expect(st.brokers.find((b: { this_environment: boolean }) => b.this_environment).requests).toBeGreaterThanOrEqual(
      2,
    ); // the status calls and the exec
  });

  it('with CODEX_SANDBOX_NETWORK_DISABLED=1: unrouted at once, without a connect (no server, no broker socket touched)', async () => {
    const connections: number[] = [];
    const server = createServer((s) => {
      connections.push(Date.now());
      s.destroy();
    });
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    try {
      const p = makeProject();
      const runtime = mkdtempSync(join(tmpdir(), 'pgx-run-'));
      Object.assign(p.env, {
        PGX_DATABASE_URL: `postgresql://nobody@127.0.0.1:${(server.address() as AddressInfo).port}/postgres`,
        PGX_BROKER: '1',
        XDG_RUNTIME_DIR: runtime,
        CODEX_SANDBOX_NETWORK_DISABLED: '1',
      });
      const r = await runPgxAsync(
        ['agent', 'exec', '--session', randomUUID(), '--fail-open', '--cwd', p.dir, '--', '/bin/bash', '-c', probe],
        { cwd: p.dir, env: p.env },
      );
      expect([r.status, r.stdout]).toEqual([3, 'ran\ndb=unset\n']);
      expect(r.stderr).toMatch(
        /^pgx: WARNING: this command runs unrouted, NOT on this session's database branch: Codex's sandbox blocks the network here \(CODEX_SANDBOX_NETWORK_DISABLED=1\)/,
      );
      // the same server without the variable: a connect (proving the listener counts them)
      const tried = await runPgxAsync(
        ['agent', 'exec', '--session', randomUUID(), '--fail-open', '--cwd', p.dir, '--', 'true'],
        {
          cwd: p.dir,
          env: { ...p.env, CODEX_SANDBOX_NETWORK_DISABLED: undefined, PGX_BROKER: '0', PGX_CONNECT_TIMEOUT_MS: '2000' },
        },
      );
      expect(tried.stderr).toMatch(/WARNING: this command runs unrouted/);
      expect(readdirSync(runtime)).toEqual([]); // no broker was asked or started: its socket directory was never made
      expect(connections.length).toBe(1);
    } finally {
      await new Promise<void>((res) => server.close(() => res()));
    }
  });
});
