// The agents' own database tool in the demo (scripts/demo.sh): what an application or a migration tool does, with
// nothing but Node. It connects with libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGSSLMODE),
// which pgx sets for each routed command, and takes no connection flags, so the command is the same on every branch.
// Each argument is one query on the same connection, in order (as psql's repeated -c); each row is printed as
// `psql -At` prints it (values joined by '|'). A query the server refuses: its message on stderr, exit 1.
import pg from 'pg';

const client = new pg.Client({ application_name: 'demo-client' });
const asText = { getTypeParser: () => (v) => v };
try {
  await client.connect();
  for (const text of process.argv.slice(2)) {
    const r = await client.query({ text, rowMode: 'array', types: asText });
    for (const res of Array.isArray(r) ? r : [r])
      for (const row of res.rows) console.log(row.map((v) => v ?? '').join('|'));
  }
  await client.end();
} catch (e) {
  console.error(`ERROR: ${e.message}`);
  process.exit(1);
}
