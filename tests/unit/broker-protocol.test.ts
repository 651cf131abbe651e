// Which broker a hook reaches (src/broker/protocol.ts): one per user environment, never another environment's.
import { mkdirSync, mkdtempSync, chmodSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { socketKey, environmentMaterial, requestVars, socketDir, socketPath } from '../../src/broker/protocol.js';

const base = { HOME: '/home/u', PATH: '/usr/bin', PGX_HOME: '/home/u/.pgx', PGX_DATABASE_URL: 'postgres://a@h/db' };
const fp = (env: NodeJS.ProcessEnv, launcher = '/opt/pgx/bin/pgx.js') => socketKey(environmentMaterial(env, launcher));

describe('broker fingerprint', () => {
  it('per-call variables (project dir, session, AI_AGENT, CLAUDECODE, env file) do not pick another broker: the request carries them', () => {
    const a = fp({ ...base, AI_AGENT: 'claude-code_2-1-328_harness', CLAUDE_PROJECT_DIR: '/p1', CLAUDE_CODE_SESSION_ID: 's1' });
    const b = fp({ ...base, AI_AGENT: 'claude-code_2-1-328_agent', CLAUDE_PROJECT_DIR: '/p2', CLAUDE_CODE_SESSION_ID: 's2', CLAUDECODE: '1', CLAUDE_ENV_FILE: '/x' });
    expect(a).toBe(b);
    expect(requestVars({ ...base, AI_AGENT: 'x', CLAUDE_PROJECT_DIR: '/p' })).toEqual({ AI_AGENT: 'x', CLAUDE_PROJECT_DIR: '/p' });
  });

  it('any variable pgx reads, the launcher, picks another broker', () => {
    const a = fp(base);
    for (const changed of [{ PGX_DATABASE_URL: 'postgres://b@h/db' }, { PGX_HOME: '/other' }, { PGHOST: 'x' }, { HOME: '/home/v' }, { PATH: '/bin' }, { PGX_POOL: '0' }, { SHELL: '/bin/zsh' }, { XDG_CONFIG_HOME: '/c' }]) {
      expect(fp({ ...base, ...changed }), JSON.stringify(changed)).not.toBe(a);
    }
    expect(fp(base, '/elsewhere/bin/pgx.js')).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{24}$/);
  });

  it('the socket directory: created 0700; refused when others can enter it or it is a link', () => {
    const rt = mkdtempSync(join(tmpdir(), 'pgx-rt-'));
    const env = { XDG_RUNTIME_DIR: rt };
    expect(socketDir(env)).toBeUndefined(); // not there, not asked to create
    expect(socketDir(env, true)).toBe(join(rt, 'pgx'));
    chmodSync(join(rt, 'pgx'), 0o750);
    expect(socketDir(env, true)).toBeUndefined();
    const rt2 = mkdtempSync(join(tmpdir(), 'pgx-rt-'));
    mkdirSync(join(rt2, 'real'), { mode: 0o700 });
    symlinkSync(join(rt2, 'real'), join(rt2, 'pgx'));
    expect(socketDir({ XDG_RUNTIME_DIR: rt2 }, true)).toBeUndefined();
  });

  it('a socket path too long for sun_path is no broker', () => {
    expect(socketPath('/tmp/pgx-0', 'a'.repeat(24))).toBe('/tmp/pgx-0/b-aaaaaaaaaaaaaaaaaaaaaaaa.sock');
    expect(socketPath('/' + 'x'.repeat(80), 'a'.repeat(24))).toBeUndefined();
  });
});
