// A SQL client for routed commands that needs nothing but Node (issue 39: tests that pass on a machine with no psql):
// `node <script> "<SQL>"` connects with libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGSSLMODE,
// which `pgx agent exec` sets for the branch), as an application or migration tool would, and prints each row as
// `psql -At` does (values joined by '|'). A statement the server refuses: its message on stderr, exit 1.
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './pgx.js';
import { shellQuote } from '../../src/lib/shell.js';

const SCRIPT = `
const pg = require(${JSON.stringify(join(REPO, 'node_modules', 'pg'))});
const c = new pg.Client({ application_name: 'node-client' });
c.connect()
  .then(() => c.query({ text: process.argv[2], rowMode: 'array', types: { getTypeParser: () => (v) => v } }))
  .then((r) => {
    for (const x of Array.isArray(r) ? r : [r]) for (const row of x.rows) console.log(row.map((v) => v ?? '').join('|'));
    return c.end();
  })
  .catch((e) => { console.error('ERROR: ' + e.message); process.exit(1); });
`;

/** The script's path (written once per process, in the repository's .tmp/). */
export function nodeClientPath(): string {
  const dir = join(REPO, '.tmp');
  const file = join(dir, 'node-client.cjs');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${file}.${process.pid}`, SCRIPT); // then renamed: another test file may be writing it too
    renameSync(`${file}.${process.pid}`, file);
  }
  return file;
}

/** A shell command that runs `sql` on the database libpq's environment points at. */
export function nodeSql(sql: string): string {
  return `node ${shellQuote(nodeClientPath())} ${shellQuote(sql)}`;
}
