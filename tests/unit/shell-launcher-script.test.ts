// The shell launcher's answer (src/broker/shell-launcher.ts answerScript), evaluated by the real sh the launcher
// runs (/bin/sh): the environment after `eval` is exactly the one route() computed, whatever the values hold.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { answerScript, SCRIPT_END } from '../../src/broker/shell-launcher.js';

/** The environment /bin/sh passes on after evaluating `script` in `from`. */
function envAfter(script: string, from: Record<string, string>): Record<string, string> {
  const r = spawnSync('/bin/sh', ['-c', `eval "$1"; exec env -0`, 'sh', script], { env: from, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return Object.fromEntries(
    r.stdout
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

const base = {
  PATH: process.env.PATH!,
  HOME: '/nonexistent',
  DATABASE_URL: 'postgres://decoy/shared',
  PGSERVICE: 'shared',
  KEEP: 'as is',
};

describe("the shell launcher's answer", () => {
  it('sets and unsets exactly what route() changed, values with quotes, newlines, $() and backticks included', () => {
    const next: Record<string, string> = {
      PATH: base.PATH,
      HOME: base.HOME,
      KEEP: 'as is',
      DATABASE_URL: 'postgres://u@h:1/b',
      PGPASSWORD: `it's $(touch /tmp/x) \`id\` "q"\nline2 ü`,
      PGDATABASE: 'b',
    };
    const script = answerScript({ ok: true, env: next, branch: 'b' }, base)!;
    expect(script.endsWith(SCRIPT_END)).toBe(true);
    const after = envAfter(script, base);
    for (const k of ['PWD', 'SHLVL', '_', 'OLDPWD']) delete after[k]; // sh's own
    expect(after).toEqual(next);
  });

  it('a refusal prints the text on stderr and exits with its code', () => {
    const script = answerScript(
      { ok: false, stderr: "pgx refused this `agent exec --agent`: it's\n", exitCode: 6 },
      base,
    )!;
    const r = spawnSync('/bin/sh', ['-c', `eval "$1"; echo ran`, 'sh', script], { encoding: 'utf8' });
    expect(r.status).toBe(6);
    expect(r.stderr).toBe("pgx refused this `agent exec --agent`: it's\n");
    expect(r.stdout).toBe('');
  });

  it('a name sh cannot export, a fallback or a hook answer: no script (the launcher execs node)', () => {
    expect(answerScript({ ok: true, env: { ...base, 'A-B': '1' }, branch: 'b' }, base)).toBeUndefined();
    expect(answerScript({ fallback: 'another environment' }, base)).toBeUndefined();
    expect(answerScript({ ok: true, print: '{}' }, base)).toBeUndefined();
  });
});
