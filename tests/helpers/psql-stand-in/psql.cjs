// A stand-in for psql, for the tests on a machine with no PostgreSQL program (issue 39, decision 513). Many tests prove
// routing by running psql INSIDE a routed command, as an agent does: where the real psql is missing, the test puts
// this one first on the command's PATH (tests/helpers/psql-stand-in.ts), never where psql exists.
// It chooses its server the way libpq does, so a routing test keeps its teeth: the connection string or URL given as
// dbname (or -d), then -h/-p/-U, then the service file's entries (PGSERVICE, PGSERVICEFILE, ~/.pg_service.conf), then
// PGHOST/PGPORT/PGUSER/PGDATABASE/PGOPTIONS/PGSSLMODE/PGAPPNAME, then libpq's defaults; the password from the
// connection string, PGPASSWORD, or the passfile (PGPASSFILE, else ~/.pgpass). It reads -c (several allowed), -f, a
// script on stdin, -X -q -A -t -v NAME=VALUE (ON_ERROR_STOP), and prints rows as psql does for -At and (roughly) the
// aligned format; errors as "ERROR:  …" on stderr; exit 1 (a -c failed), 2 (no connection), 3 (ON_ERROR_STOP in a
// script). A backslash command other than \q, \echo and \! is refused (exit 2), so a test that needs one fails loudly.
'use strict';
process.title = 'psql';
const { readFileSync } = require('node:fs');
const { homedir, userInfo } = require('node:os');
const { join } = require('node:path');
const pg = require(join(__dirname, '..', '..', '..', 'node_modules', 'pg'));

function usage(msg) {
  process.stderr.write(`psql (stand-in): ${msg}\n`);
  process.exit(2);
}

const WITH_VALUE = { c: 'command', f: 'file', v: 'set', d: 'dbname', h: 'host', p: 'port', U: 'username', F: 'fieldsep' };
const FLAG = { X: 'no-psqlrc', q: 'quiet', A: 'no-align', t: 'tuples-only', w: 'no-password', e: 'echo-queries' };
const opt = { actions: [], vars: {}, fieldsep: '|', conn: {}, positional: [] };
const argv = process.argv.slice(2);
function take(name, value) {
  if (name === 'command') opt.actions.push({ sql: value, from: 'command' });
  else if (name === 'file') opt.actions.push({ file: value });
  else if (name === 'set' || name === 'variable') {
    const eq = value.indexOf('=');
    opt.vars[eq < 0 ? value : value.slice(0, eq)] = eq < 0 ? '' : value.slice(eq + 1);
  } else if (name === 'fieldsep') opt.fieldsep = value;
  else opt.conn[name] = value;
}
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a.startsWith('--') && a.length > 2) {
    const eq = a.indexOf('=');
    const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
    if (Object.values(FLAG).includes(name)) opt[name] = true;
    else if (Object.values(WITH_VALUE).includes(name) || name === 'variable') {
      if (eq >= 0) take(name, a.slice(eq + 1));
      else if (i + 1 < argv.length) take(name, argv[++i]);
      else usage(`option --${name} needs a value`);
    } else usage(`option --${name} is not supported by this stand-in`);
  } else if (a.startsWith('-') && a.length > 1) {
    for (let j = 1; j < a.length; j++) {
      const ch = a[j];
      if (FLAG[ch]) opt[FLAG[ch]] = true;
      else if (WITH_VALUE[ch]) {
        const rest = a.slice(j + 1);
        if (rest !== '') take(WITH_VALUE[ch], rest);
        else if (i + 1 < argv.length) take(WITH_VALUE[ch], argv[++i]);
        else usage(`option -${ch} needs a value`);
        break;
      } else usage(`option -${ch} is not supported by this stand-in`);
    }
  } else opt.positional.push(a);
}
if (opt.positional[0] !== undefined && opt.conn.dbname === undefined) opt.conn.dbname = opt.positional[0];
if (opt.positional[1] !== undefined && opt.conn.username === undefined) opt.conn.username = opt.positional[1];

// ---- the connection, as libpq chooses it ----
function parseConninfo(s) {
  const out = {};
  const re = /\s*([A-Za-z_]+)\s*=\s*('((?:\\.|[^'\\])*)'|(\S+))/gy;
  let m;
  while ((m = re.exec(s))) out[m[1]] = m[3] !== undefined ? m[3].replace(/\\(.)/g, '$1') : m[4];
  return out;
}
function parseUrl(s) {
  const u = new URL(s);
  const out = {};
  if (u.hostname) out.host = decodeURIComponent(u.hostname.replace(/^\[|\]$/g, ''));
  if (u.port) out.port = u.port;
  if (u.username) out.user = decodeURIComponent(u.username);
  if (u.password) out.password = decodeURIComponent(u.password);
  const db = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (db) out.dbname = db;
  for (const [k, v] of u.searchParams) out[k] = v;
  return out;
}
const params = {};
const fill = (from) => {
  for (const [k, v] of Object.entries(from)) if (v !== undefined && v !== '' && params[k] === undefined) params[k] = v;
};
const db = opt.conn.dbname;
if (db !== undefined && /^postgres(ql)?:\/\//.test(db)) fill(parseUrl(db));
else if (db !== undefined && db.includes('=')) fill(parseConninfo(db));
fill({ host: opt.conn.host, port: opt.conn.port, user: opt.conn.username });
if (db !== undefined && !db.includes('=') && !/^postgres(ql)?:\/\//.test(db)) fill({ dbname: db });

function serviceEntries(service) {
  const files = [process.env.PGSERVICEFILE ?? join(homedir(), '.pg_service.conf')];
  if (process.env.PGSYSCONFDIR) files.push(join(process.env.PGSYSCONFDIR, 'pg_service.conf'));
  for (const f of files) {
    let text;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    let inIt = false;
    const out = {};
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      const sect = /^\[(.*)\]$/.exec(line);
      if (sect) {
        if (inIt) return out;
        inIt = sect[1] === service;
        continue;
      }
      const eq = line.indexOf('=');
      if (inIt && eq > 0) out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
    }
    if (inIt) return out;
  }
  usage(`definition of service "${service}" not found`);
}
const service = params.service ?? process.env.PGSERVICE;
if (service) fill(serviceEntries(service));
const E = process.env;
fill({
  host: E.PGHOST,
  port: E.PGPORT,
  user: E.PGUSER,
  dbname: E.PGDATABASE,
  password: E.PGPASSWORD,
  options: E.PGOPTIONS,
  sslmode: E.PGSSLMODE,
  application_name: E.PGAPPNAME,
});
fill({ host: '/var/run/postgresql', port: '5432', user: userInfo().username, application_name: 'psql' });
fill({ dbname: params.user });
if (params.password === undefined) {
  const passfile = params.passfile ?? E.PGPASSFILE ?? join(homedir(), '.pgpass');
  let text = '';
  try {
    text = readFileSync(passfile, 'utf8');
  } catch {}
  /** A passfile line's fields: split at each ':' not escaped by a backslash, the escapes removed. */
  const fields = (line) => {
    const f = [''];
    for (let k = 0; k < line.length; k++) {
      if (line[k] === '\\' && k + 1 < line.length) f[f.length - 1] += line[++k];
      else if (line[k] === ':' && f.length < 5) f.push('');
      else f[f.length - 1] += line[k];
    }
    return f;
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const f = fields(line);
    if (f.length < 5) continue;
    const [h, p, d, u] = f;
    const ok = (pat, v) => pat === '*' || pat === v;
    if (ok(h, params.host.startsWith('/') ? 'localhost' : params.host) && ok(p, params.port) &&
        ok(d, params.dbname) && ok(u, params.user)) {
      params.password = f[4];
      break;
    }
  }
}
const sslmode = params.sslmode ?? 'prefer';
const ssl = ['require', 'verify-ca', 'verify-full'].includes(sslmode)
  ? { rejectUnauthorized: sslmode !== 'require' }
  : false;

// ---- the statements ----
/** Splits a script into statements as psql's lexer does for the cases tests use: quotes, dollar quotes, comments. */
function splitScript(text) {
  const out = [];
  let cur = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    const rest = text.slice(i);
    if (cur.trim() === '' && ch === '\\') {
      const end = text.indexOf('\n', i);
      out.push({ meta: text.slice(i + 1, end < 0 ? text.length : end).trim() });
      i = end < 0 ? text.length : end + 1;
      cur = '';
      continue;
    }
    let m;
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      while (j < text.length && !(text[j] === ch && text[j + 1] !== ch)) j += text[j] === ch ? 2 : 1;
      cur += text.slice(i, j + 1);
      i = j + 1;
    } else if (rest.startsWith('--')) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else if (rest.startsWith('/*')) {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if ((m = /^\$([A-Za-z_][A-Za-z_0-9]*)?\$/.exec(rest))) {
      const end = text.indexOf(m[0], i + m[0].length);
      const stop = end < 0 ? text.length : end + m[0].length;
      cur += text.slice(i, stop);
      i = stop;
    } else if (ch === ';') {
      if (cur.trim() !== '') out.push({ sql: cur.trim() });
      cur = '';
      i++;
    } else {
      cur += ch;
      i++;
    }
  }
  if (cur.trim() !== '') out.push({ sql: cur.trim() });
  return out;
}

function tagOf(r) {
  const n = r.rowCount ?? 0;
  if (r.command === 'INSERT') return `INSERT 0 ${n}`;
  if (['UPDATE', 'DELETE', 'SELECT', 'MOVE', 'FETCH', 'COPY', 'MERGE'].includes(r.command)) return `${r.command} ${n}`;
  return r.command ?? '';
}
const text = (v) => (v === null || v === undefined ? '' : String(v));
function printResult(r) {
  if (!r.fields || r.fields.length === 0) {
    if (!opt.quiet && r.command) process.stdout.write(`${tagOf(r)}\n`);
    return;
  }
  const rows = r.rows.map((row) => row.map(text));
  if (opt['no-align']) {
    if (!opt['tuples-only']) process.stdout.write(`${r.fields.map((f) => f.name).join(opt.fieldsep)}\n`);
    for (const row of rows) process.stdout.write(`${row.join(opt.fieldsep)}\n`);
    if (!opt['tuples-only']) process.stdout.write(`(${rows.length} row${rows.length === 1 ? '' : 's'})\n`);
    return;
  }
  const width = r.fields.map((f, k) => Math.max(opt['tuples-only'] ? 0 : f.name.length, ...rows.map((x) => x[k].length)));
  const line = (cells) => ` ${cells.map((c, k) => c.padEnd(width[k])).join(' | ')}`.trimEnd();
  if (!opt['tuples-only']) {
    process.stdout.write(`${line(r.fields.map((f, k) => f.name.padStart((width[k] + f.name.length) >> 1)))}\n`);
    process.stdout.write(`${width.map((w) => '-'.repeat(w + 2)).join('+')}\n`);
  }
  for (const row of rows) process.stdout.write(`${line(row)}\n`);
  if (!opt['tuples-only']) process.stdout.write(`(${rows.length} row${rows.length === 1 ? '' : 's'})\n\n`);
}

async function main() {
  const onErrorStop = ['1', 'on', 'true'].includes(String(opt.vars.ON_ERROR_STOP ?? '').toLowerCase());
  const client = new pg.Client({
    host: params.host,
    port: Number(params.port),
    user: params.user,
    database: params.dbname,
    password: params.password,
    options: params.options,
    application_name: params.application_name,
    ssl,
    types: { getTypeParser: () => (v) => v },
  });
  client.on('notice', (n) => process.stderr.write(`${n.severity ?? 'NOTICE'}:  ${n.message}\n`));
  try {
    await client.connect();
  } catch (e) {
    const where = params.host.startsWith('/') ? `socket "${params.host}/.s.PGSQL.${params.port}"` : `"${params.host}", port ${params.port}`;
    process.stderr.write(`psql: error: connection to server on ${where} failed: ${e.message}\n`);
    process.exit(2);
  }
  if (opt.actions.length === 0) opt.actions.push({ stdin: true });
  let status = 0;
  for (const act of opt.actions) {
    if (act.from === 'command') {
      if (act.sql.trim().startsWith('\\')) {
        const s = await meta(act.sql.trim().slice(1));
        if (s === -1) break;
        status = s;
        if (s !== 0) break;
        continue;
      }
      try {
        // psql sends a -c string as one query (its statements in one implicit transaction), and prints each result.
        const r = await client.query({ text: act.sql, rowMode: 'array' });
        for (const x of Array.isArray(r) ? r : [r]) printResult(x);
      } catch (e) {
        process.stderr.write(`ERROR:  ${e.message}\n`);
        status = 1;
        break;
      }
      continue;
    }
    const script = act.stdin ? readFileSync(0, 'utf8') : readFileSync(act.file, 'utf8');
    for (const st of splitScript(script)) {
      if (st.meta !== undefined) {
        const s = await meta(st.meta);
        if (s === -1) return finish(client, status);
        if (s !== 0) return finish(client, s);
        continue;
      }
      try {
        const r = await client.query({ text: st.sql, rowMode: 'array' });
        printResult(r);
      } catch (e) {
        process.stderr.write(`psql:${act.stdin ? '<stdin>' : act.file}: ERROR:  ${e.message}\n`);
        if (onErrorStop) return finish(client, 3);
      }
    }
  }
  return finish(client, status);
}
async function meta(cmd) {
  if (cmd === 'q' || cmd === 'quit') return -1;
  if (cmd.startsWith('!')) {
    // psql's \! runs the rest in a shell, its output in line with the rows printed before it.
    require('node:child_process').spawnSync('/bin/sh', ['-c', cmd.slice(1)], { stdio: 'inherit' });
    return 0;
  }
  if (cmd.startsWith('echo')) {
    process.stdout.write(`${cmd.slice(4).trim()}\n`);
    return 0;
  }
  process.stderr.write(`psql (stand-in): the backslash command \\${cmd.split(/\s/)[0]} is not supported\n`);
  return 2;
}
async function finish(client, status) {
  await client.end().catch(() => {});
  process.exit(status);
}
main().catch((e) => {
  process.stderr.write(`psql (stand-in): ${e.message}\n`);
  process.exit(2);
});
