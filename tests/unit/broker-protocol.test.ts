// Which broker a hook reaches (src/broker/protocol.ts): one per user, build and launcher, whatever the environment
// (decision 442); where its socket lives (decision 443).
import { mkdirSync, mkdtempSync, chmodSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  socketKey,
  environmentMaterial,
  requestEnv,
  socketDir,
  socketDirPath,
  socketPath,
  MAX_SOCKET_DIR,
} from '../../src/broker/protocol.js';

const base = { HOME: '/home/u', PATH: '/usr/bin', PGX_HOME: '/home/u/.pgx', PGX_DATABASE_URL: 'postgres://a@h/db' };
const fp = (env: NodeJS.ProcessEnv, launcher = '/opt/pgx/bin/pgx.js') => socketKey(environmentMaterial(env, launcher));

describe('broker fingerprint', () => {
  it('no variable of the environment picks another broker: the request carries the whole environment', () => {
    const a = fp(base);
    for (const changed of [
      { PGX_DATABASE_URL: 'postgres://b@h/db' },
      { PGX_HOME: '/other' },
      { PGHOST: 'x', PGUSER: 'y', PGSSLMODE: 'require' },
      { HOME: '/home/v' },
      { PATH: '/bin' },
      { PGX_POOL: '0' },
      { AI_AGENT: 'claude-code_2-1-328_agent', CLAUDE_PROJECT_DIR: '/p2', CLAUDECODE: '1' },
    ]) {
      expect(fp({ ...base, ...changed }), JSON.stringify(changed)).toBe(a);
    }
    expect(requestEnv({ ...base, AI_AGENT: 'x', GONE: undefined })).toEqual({ ...base, AI_AGENT: 'x' });
  });

  it('the launcher picks another broker', () => {
    expect(fp(base, '/elsewhere/bin/pgx.js')).not.toBe(fp(base));
    expect(fp(base)).toMatch(/^[0-9a-f]{24}$/);
  });

  it('where the sockets live: XDG_RUNTIME_DIR, a temporary directory the user set, $HOME/.pgx/run, /tmp/pgx-<uid>', () => {
    const uid = process.getuid!();
    expect(socketDirPath({ XDG_RUNTIME_DIR: '/run/user/7', TMPDIR: '/t', HOME: '/h' })).toBe('/run/user/7/pgx');
    expect(socketDirPath({ TMPDIR: '/t/', HOME: '/h' })).toBe(`/t/pgx-${uid}`);
    expect(socketDirPath({ TMP: '/t2', HOME: '/h' })).toBe(`/t2/pgx-${uid}`);
    expect(socketDirPath({ HOME: '/home/u' })).toBe('/home/u/.pgx/run');
    expect(socketDirPath({ XDG_RUNTIME_DIR: 'relative', TMPDIR: 'rel', HOME: '/home/u' })).toBe('/home/u/.pgx/run');
    // a home too long for a socket path under it: /tmp, where the directory must then prove itself private
    const longHome = '/' + 'h'.repeat(MAX_SOCKET_DIR - 9);
    expect(socketDirPath({ HOME: longHome })).toBe(`/tmp/pgx-${uid}`);
    expect(socketDirPath({ HOME: longHome.slice(0, -1) })).toBe(`${longHome.slice(0, -1)}/.pgx/run`);
    expect(socketPath(socketDirPath({ HOME: longHome.slice(0, -1) })!, 'a'.repeat(24))).toBeDefined();
    expect(socketDirPath({})).toBe(`/tmp/pgx-${uid}`);
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
