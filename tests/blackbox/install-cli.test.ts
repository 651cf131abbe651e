// `pgx agent install|uninstall claude` at the CLI edge: a dry run names the .pgx.toml it would write (and writes
// nothing); uninstall deletes a settings file that pgx's removal left empty (and an emptied .claude/), nothing else.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonOf, runPgx } from '../helpers/pgx.js';

function bareDir() {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-inst-'));
  return { dir, cwd: dir, env: { PATH: process.env.PATH, HOME: dir, PGX_HOME: join(dir, '.pgx-home') } as NodeJS.ProcessEnv };
}

describe('agent install / uninstall claude (CLI)', () => {
  it('--dry-run names the .pgx.toml it would write, and writes nothing', () => {
    const p = bareDir();
    const j = jsonOf(runPgx(['agent', 'install', 'claude', '--dry-run', '--json'], p));
    expect(j).toMatchObject({ dryRun: true, config_written: join(p.dir, '.pgx.toml') });
    const human = runPgx(['agent', 'install', 'claude', '--dry-run'], p);
    expect(human.stdout).toContain(`would write ${join(p.dir, '.pgx.toml')}`);
    expect(existsSync(join(p.dir, '.pgx.toml'))).toBe(false);
    expect(existsSync(join(p.dir, '.claude'))).toBe(false);
    // with a .pgx.toml already there, nothing to write
    writeFileSync(join(p.dir, '.pgx.toml'), '[project]\nname = "x"\n');
    expect(jsonOf(runPgx(['agent', 'install', 'claude', '--dry-run', '--json'], p)).config_written).toBeNull();
  });

  it('uninstall after install leaves no settings file (nor .claude/) that only held pgx; a file with other keys stays', () => {
    const p = bareDir();
    expect(runPgx(['agent', 'install', 'claude'], p).status).toBe(0);
    expect(existsSync(join(p.dir, '.claude', 'settings.json'))).toBe(true);
    const u = jsonOf(runPgx(['agent', 'uninstall', 'claude', '--json'], p));
    expect(u).toMatchObject({ changed: true, file_removed: true });
    expect(existsSync(join(p.dir, '.claude'))).toBe(false);

    const q = bareDir();
    mkdirSync(join(q.dir, '.claude'));
    writeFileSync(join(q.dir, '.claude', 'settings.json'), JSON.stringify({ model: 'opus' }));
    expect(runPgx(['agent', 'install', 'claude'], q).status).toBe(0);
    expect(jsonOf(runPgx(['agent', 'uninstall', 'claude', '--json'], q))).toMatchObject({ changed: true, file_removed: false });
    expect(JSON.parse(readFileSync(join(q.dir, '.claude', 'settings.json'), 'utf8'))).toEqual({ model: 'opus' });
  });
});
