// No password, in any form, in any error: every URL intake (source import --from, [server] url, PGX_DATABASE_URL,
// init --url) is fuzzed with passwords in every position and scheme, and nothing it says may hold the password.
// A hand-rolled generator with a fixed seed (reproducible; a failure prints the case). Each password carries a
// random alphanumeric core between special characters, and the assertion is on the core, so that a password cut
// in two by an unencoded "#", "/" or "?" and printed in part is caught too.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeError, redactSecrets } from '../../src/lib/errors.js';
import { validateConfigText } from '../../src/project/config-schema.js';
import { initProject } from '../../src/project/init.js';
import { parseUrl, urlWithoutPassword } from '../../src/server/conn-params.js';
import { classifyInput } from '../../src/project/source-input.js';
import { unsupportedConnectionString } from '../../src/server/url-intake.js';

/** mulberry32: a small seeded PRNG. */
function prng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
// PGX_FUZZ_SEED / PGX_FUZZ_CASES widen a run by hand; the default is fixed, so a failure in CI reproduces.
const rnd = prng(Number(process.env.PGX_FUZZ_SEED ?? 0x5eed18));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
const alnum = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const specials = '@#/?:%!$&\'()*+,;=~-_.[]^{}|<>\\`"é€';
const str = (alphabet: string, n: number) => Array.from({ length: n }, () => pick([...alphabet])).join('');

/** A password: specials around a core that cannot occur in any message pgx writes (it holds digits and mixed case). */
function password(): { pw: string; core: string } {
  const core = `Qz${str(alnum, 8)}9`;
  return { pw: `${str(specials, Math.floor(rnd() * 3))}${core}${str(specials, Math.floor(rnd() * 3))}`, core };
}

const SCHEMES = [
  'postgres',
  'postgresql',
  'POSTGRESQL',
  'postgress',
  'postgre',
  'postgressql',
  'pg',
  'psql',
  'mysql',
  'mariadb',
  'http',
  'https',
  'redis',
  'mongodb+srv',
  'jdbc:postgresql',
  'sqlite',
  'file',
];
const HOSTS = ['127.0.0.1', 'db.example.com', '[::1]', '[fe80::1%25eth0]', '%2Ftmp%2Fpgsock', '', 'h:99999', '[::1'];
const enc = (s: string) => encodeURIComponent(s);

/** One argument with the password somewhere a user could put it. */
function connectionString(pw: string): string {
  const scheme = pick(SCHEMES);
  const user = pick(['me', 'app_user', 'a%40b', '']);
  const host = pick(HOSTS);
  const db = pick(['shop_dev', 'postgres', 'template1', '', 'a/b']);
  const p = pick([pw, enc(pw)]); // raw (maybe with unencoded specials) or percent-encoded
  const query = pick([
    '',
    '?sslmode=require',
    '?sslmode=bogus',
    '?schema=public',
    '?host=/tmp',
    '?port=x',
    '?connect_timeout=5&application_name=x',
  ]);
  switch (Math.floor(rnd() * 10)) {
    case 0:
      return `${scheme}://${user}:${p}@${host}/${db}${query}`;
    case 1:
      return `${scheme}:/${user}:${p}@${host}/${db}`; // a slash missing
    case 2:
      return `${user || 'me'}:${p}@${host || 'h'}:5432/${db}`; // no scheme at all
    case 3:
      return `${scheme}://${user}@${host}/${db}?${pick(['', 'sslmode=require&'])}password=${p}${pick(['', '&sslmode=bogus', '&schema=x'])}`;
    case 4:
      return `${scheme}://${user}:${p}@/${db}?host=${pick(['/tmp', '%2Fvar%2Frun%2Fpostgresql', '/no such dir'])}`; // unix socket
    case 5:
      return `host=${pick(['h', '/tmp'])} user=${user || 'me'} password=${pick([pw, `'${pw.replace(/['\\]/g, '\\$&')}'`])} dbname=${db || 'x'}`; // keyword/value
    case 6:
      return `${pick([' ', '  ', '\t'])}${scheme}://${user}:${p}@${host}/${db}${pick([' ', ''])}`; // stray whitespace
    case 7:
      return `${scheme}://${user}:${p}@${host}:${pick(['5432', '0', '65536', 'port'])}/${db}#frag`;
    case 8:
      return `${scheme}://${user}:${p}@${host}/${db}?${pick(['password', 'PASSWORD', 'pwd'])}=${p}&sslmode=${pick(['require', 'nope'])}`;
    default:
      return `${scheme}://${user}:${p}@${host}`; // no database
  }
}

/** Everything a caller could print about an outcome: the error as pgx prints it (message and hint), or what it shows. */
function said(f: () => unknown): string {
  try {
    return String(JSON.stringify(f()));
  } catch (e) {
    const d = describeError(e);
    // the raw message too: describeError masks, but the parsers themselves must not quote the password
    return `${d.message}\n${d.hint}\n${(e as Error).message}\n${(e as { hint?: string }).hint ?? ''}`;
  }
}

function leaks(text: string, pw: string, core: string): boolean {
  return [core, pw, enc(pw)].some((s) => s.length >= 4 && text.includes(s));
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const scratch = mkdtempSync(join(tmpdir(), 'pgx-fuzz-'));
dirs.push(scratch);

const CASES = Number(process.env.PGX_FUZZ_CASES ?? 1500);

describe('no password in any error (fuzzed)', () => {
  it(`source import --from: ${CASES} arguments`, () => {
    for (let i = 0; i < CASES; i++) {
      const { pw, core } = password();
      const arg = connectionString(pw);
      const out = said(() => {
        const r = classifyInput(arg, scratch);
        // what the CLI then prints: the display form and the dropped parameters' names (never the connection)
        return { display: r.display, dropped: r.droppedParams, format: r.format };
      });
      if (leaks(out, pw, core)) expect.fail(`case ${i}: --from ${JSON.stringify(arg)} said ${out}`);
    }
  });

  it(`[server] url / PGX_DATABASE_URL (parseUrl) and the .pgx.toml schema: ${CASES} URLs`, () => {
    for (let i = 0; i < CASES; i++) {
      const { pw, core } = password();
      const url = connectionString(pw);
      const parsed = said(() => urlWithoutPassword(parseUrl(url)));
      if (leaks(parsed, pw, core)) expect.fail(`case ${i}: parseUrl(${JSON.stringify(url)}) said ${parsed}`);
      const toml = said(() => validateConfigText(`[server]\nurl = ${JSON.stringify(url)}\n`, '/p/.pgx.toml'));
      if (leaks(toml, pw, core)) expect.fail(`case ${i}: [server] url = ${JSON.stringify(url)} said ${toml}`);
      // an invalid TOML line holding the url (an unescaped quote): the parser's message must not quote it either
      const bad = said(() => validateConfigText(`[server]\nurl = "${url}\n`, '/p/.pgx.toml'));
      if (leaks(bad, pw, core)) expect.fail(`case ${i}: broken TOML with ${JSON.stringify(url)} said ${bad}`);
    }
  });

  it('init --url: 200 URLs (the file is written only for a URL that parses)', () => {
    for (let i = 0; i < 200; i++) {
      const { pw, core } = password();
      const url = connectionString(pw);
      const dir = mkdtempSync(join(scratch, 'init-'));
      const out = said(() => initProject({ dir, url }).name);
      if (leaks(out, pw, core)) expect.fail(`case ${i}: init --url ${JSON.stringify(url)} said ${out}`);
    }
  });

  it('redactSecrets masks a password wherever a message quotes it (passwords without whitespace)', () => {
    for (let i = 0; i < CASES; i++) {
      const { pw, core } = password();
      const arg = connectionString(pw.replace(/\s/g, ''));
      if (/\s/.test(arg.trim()) && !arg.trim().startsWith('host=')) continue;
      const messages = [
        `--from ${join('/home/me/shop', arg.trim())}: no such file or directory.`,
        `pg_dump: error: could not connect: "${arg.trim()}"`,
        `{"url":${JSON.stringify(arg.trim())},"x":1}`,
        `invalid value '${arg.trim()}' for --url`,
      ];
      for (const m of messages) {
        const r = redactSecrets(m);
        if (r.includes(core)) expect.fail(`case ${i}: redactSecrets(${JSON.stringify(m)}) = ${r}`);
      }
    }
  });

  it('the forms of the issue: a typo in the scheme and another scheme are named, not looked up as files', () => {
    expect(said(() => classifyInput('postgress://me:s3cret-pw@127.0.0.1:5432/shop', scratch))).toMatch(
      /unsupported scheme 'postgress' \(a typo for postgresql:\/\/\?\)/,
    );
    expect(said(() => classifyInput('mysql://u:p4ss-word@h/x', scratch))).toMatch(/unsupported scheme 'mysql'/);
    expect(said(() => classifyInput('postgresql:/me:s3cret-pw@h/x', scratch))).toMatch(
      /unsupported scheme 'postgresql'/,
    );
    expect(said(() => classifyInput('host=h password=s3cret-pw', scratch))).toMatch(/keyword\/value connection string/);
    expect(said(() => parseUrl('mysql://u:p4ss-word@h/x'))).toMatch(/unsupported scheme 'mysql'/);
    expect(said(() => validateConfigText('[server]\nurl = "mysql://u:p4ss-word@h/x"\n', '/p/.pgx.toml'))).toMatch(
      /server\.url: unsupported scheme 'mysql'/,
    );
    // the words of a hint are not a password: "user name and password: % → %25" stays readable
    expect(redactSecrets('the user name and password: % → %25, @ → %40')).toBe(
      'the user name and password: % → %25, @ → %40',
    );
  });

  it('a file whose name merely looks like user:pw@host is still a file; a supported URL still parses', () => {
    const f = join(scratch, 'backup:2024@night.sql');
    writeFileSync(f, 'SELECT 1;\n');
    expect(classifyInput('backup:2024@night.sql', scratch)).toMatchObject({ kind: 'path', format: 'plain' });
    expect(unsupportedConnectionString('postgresql://me:pw@h/db')).toBeUndefined();
    expect(unsupportedConnectionString('dump.sql')).toBeUndefined();
    const r = classifyInput('postgresql://me@h/db?password=s3cret-pw&schema=public', scratch);
    expect(r.conn!.password).toBe('s3cret-pw'); // libpq reads ?password= too: it is passed on, not dropped
    expect(r.display).toBe('postgresql://me@h:5432/db');
    expect(r.droppedParams).toEqual(['(a parameter not shown)']); // with a password= in the query, no key is named
    expect(classifyInput('postgresql://me@h/db?schema=public', scratch).droppedParams).toEqual(['schema']);
  });
});
