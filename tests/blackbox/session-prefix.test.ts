// `--session` takes the prefix `pgx agent ls` shows (8 characters) when it names one session of the project: down,
// diff, reset and the --agent --session pair act on that session; an ambiguous prefix is exit 2 listing the
// candidates in full; a prefix under 4 characters is taken as a whole id (nothing matches: exit 5).
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, makeProject, runPgx } from '../helpers/pgx.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('--session <the prefix ls shows>', () => {
  it('names the one session it starts; ambiguous: exit 2 with the candidates; too short: taken as given', () => {
    const p = makeProject();
    dirs.push(p.dir);
    const [one, two, other] = [
      'aaaa1111-0000-4000-8000-000000000001',
      'aaaa1111-ffff-4000-8000-000000000002',
      'bbbb2222-0000-4000-8000-000000000003',
    ];
    for (const s of [one, two, other]) expect(runPgx(['agent', 'up', '--session', s, '--json'], p).status).toBe(0);
    expect(runPgx(['agent', 'up', '--agent', 'sub1', '--session', other, '--json'], p).status).toBe(0);
    const ls = runPgx(['agent', 'ls'], p).stdout;
    expect(ls).toContain('bbbb2222 '); // what the user copies from

    const diff = runPgx(['agent', 'diff', '--session', 'bbbb2222', '--json'], p);
    expect(diff.status, diff.stderr).toBe(0);
    expect(jsonOf(diff).branch ?? jsonOf(diff).name).toBe(
      jsonOf(runPgx(['agent', 'up', '--session', other, '--json'], p)).branch,
    );
    // the pair: that session's subagent
    const sub = runPgx(['agent', 'diff', '--agent', 'sub1', '--session', 'bbbb2222', '--json'], p);
    expect(sub.status, sub.stderr).toBe(0);

    const ambiguous = runPgx(['agent', 'down', '--session', 'aaaa1111'], p);
    expect(ambiguous.status).toBe(2);
    expect(ambiguous.stderr).toContain(
      `--session aaaa1111 is the start of 2 sessions of project "${p.name}": ${one}, ${two}.`,
    );
    expect(
      jsonOf(runPgx(['agent', 'ls', '--json'], p)).branches.filter((b: { state: string }) => b.state === 'active'),
    ).toHaveLength(4); // nothing done

    const downOne = runPgx(['agent', 'down', '--session', 'aaaa1111-0', '--now', '--json'], p); // enough to tell them apart
    expect(downOne.status, downOne.stderr).toBe(0);
    expect(jsonOf(downOne).branches).toMatchObject([{ action: 'dropped' }]);
    expect(
      jsonOf(runPgx(['agent', 'ls', '--json'], p))
        .branches.map((b: { session_id: string }) => b.session_id)
        .sort(),
    ).toEqual([two, other, other]);

    expect(runPgx(['agent', 'down', '--session', 'bbb'], p).status).toBe(5); // under 4 characters: a whole id, none
    expect(runPgx(['agent', 'down', '--project', '--now', '--yes'], p).status).toBe(0);
  });
});
