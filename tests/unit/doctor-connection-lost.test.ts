// The doctor's report of a check that threw: the server going away under it (the driver's "Client has encountered a
// connection error and is not queryable") is a state of the server with a fix, not "the check itself failed … report
// it". The errors are the real driver's, from a session the real server ended.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { checkFailure } from '../../src/doctor/doctor.js';
import { isConnectionLost } from '../../src/server/db.js';
import { pgInfo, sql } from '../helpers/pgx.js';

/** The errors node-postgres gives after the server ended the session, query after query (the last: "not queryable"). */
async function lostConnectionErrors(): Promise<unknown[]> {
  const p = pgInfo();
  const c = new pg.Client({ host: p.host, port: p.port, user: p.user, password: p.password, database: 'postgres' });
  c.on('error', () => {}); // the unsolicited one, when the server ends the session
  await c.connect();
  const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  await sql('SELECT pg_terminate_backend($1)', [pid]);
  const errors: unknown[] = [];
  for (let i = 0; i < 3; i++) await c.query('SELECT 1').catch((e) => errors.push(e));
  await c.end().catch(() => {});
  return errors;
}

describe('doctor: a check whose connection was lost', () => {
  it('says the connection was lost, with the fix for the server in use; the checks after it point to the first', async () => {
    const errors = await lostConnectionErrors();
    expect(errors.length).toBe(3);
    const notQueryable = errors[2];
    expect(String((notQueryable as Error).message)).toMatch(/not queryable/); // what the doctor used to print as is
    for (const e of errors) expect(isConnectionLost(e), String(e)).toBe(true);

    const local = checkFailure('branches', notQueryable, undefined, undefined);
    expect(local).toEqual({
      name: 'branches',
      status: 'fail',
      detail:
        "the connection to pgx's local server was lost during this check (it stopped or restarted, or an administrator ended the session)",
      fix: '`pgx local status` (`pgx local up` if it is stopped), then run `pgx agent doctor` again',
    });
    const config = { serverUrl: 'postgresql://me@db/postgres', serverUrlFrom: 'PGX_DATABASE_URL' } as Parameters<
      typeof checkFailure
    >[3];
    expect(checkFailure('guards', notQueryable, undefined, config).fix).toBe(
      'check that the server of PGX_DATABASE_URL is up (`pg_isready`), then run `pgx agent doctor` again',
    );
    expect(checkFailure('guards', notQueryable, 'branches', config)).toEqual({
      name: 'guards',
      status: 'skip',
      detail: 'not checked: the connection to the server was lost (see the branches check)',
    });
    // anything else is still a bug of the check, to report
    expect(checkFailure('pool', new TypeError('x is undefined'), undefined, config)).toMatchObject({
      status: 'fail',
      detail: 'the check itself failed: x is undefined',
      fix: 'rerun with DEBUG=pgx and report it',
    });
    expect(isConnectionLost(new Error('relation "t" does not exist'))).toBe(false);
  });
});
