// The Claude Code plugin copy: its hooks.json says exactly what `pgx agent install claude` installs (it is generated
// from the event table, and a changed table is drift), its manifest and skill are well-formed, and
// scripts/plugins-sync.mjs --check catches every kind of drift (on a temp copy).
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HOOK_EVENTS, PGX_HOOK_COMMAND_RE } from '../../src/install/hook-events.js';
import { pluginHooksText } from '../../src/hooks/claude/settings-entries.js';

const REPO = resolve(import.meta.dirname, '../..');
const PLUGIN = join(REPO, 'plugins', 'claude', 'pgx');
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8'));

function sync(args: string[], root = REPO) {
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'plugins-sync.mjs'), ...args], {
    encoding: 'utf8',
    cwd: root,
  });
  return { status: r.status, out: r.stdout + r.stderr };
}

let tmp: string | undefined;
afterEach(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  tmp = undefined;
});

describe('plugin manifest, hooks and skill', () => {
  it('hooks.json has the same six entries as HOOK_EVENTS (matcher, timeout), each calling the plugin launcher', () => {
    const h = json(join(PLUGIN, 'hooks', 'hooks.json'));
    expect(typeof h.description).toBe('string');
    expect(Object.keys(h.hooks)).toEqual(HOOK_EVENTS.map((e) => e.event));
    for (const e of HOOK_EVENTS) {
      const groups = h.hooks[e.event];
      expect(groups).toHaveLength(1);
      expect(groups[0].matcher).toBe(e.matcher);
      expect(groups[0].hooks).toEqual([
        {
          type: 'command',
          command: `"\${CLAUDE_PLUGIN_ROOT}/bin/pgx.js" agent hook ${e.cli}`,
          timeout: e.timeout,
          ...(e.onFailure ? { onFailure: e.onFailure } : {}),
        },
      ]);
      expect(PGX_HOOK_COMMAND_RE.exec(groups[0].hooks[0].command)?.[1]).toBe(e.cli); // doctor/uninstall recognise it
    }
  });

  it('plugin.json and the marketplace name the plugin; the version follows package.json', () => {
    const m = json(join(PLUGIN, '.claude-plugin', 'plugin.json'));
    expect(m.name).toBe('pgx');
    expect(m.version).toBe(json(join(REPO, 'package.json')).version);
    expect(m.description.length).toBeGreaterThan(20);
    const market = json(join(REPO, '.claude-plugin', 'marketplace.json'));
    expect(market).toMatchObject({ name: 'pgx', owner: { name: 'pgx' } });
    expect(market.plugins).toEqual([{ name: 'pgx', source: './plugins/claude/pgx', description: expect.any(String) }]);
    expect(existsSync(join(REPO, market.plugins[0].source, '.claude-plugin', 'plugin.json'))).toBe(true);
    expect(json(join(PLUGIN, 'package.json')).type).toBe('module'); // dist/*.js are ES modules with no parent package.json
  });

  it('the skill has name pgx, a description under the 1,536-character cut, and its links resolve', () => {
    const text = readFileSync(join(REPO, 'skill', 'SKILL.md'), 'utf8');
    const fm = /^---\n([\s\S]*?)\n---\n/.exec(text)?.[1] ?? '';
    expect(fm).toMatch(/^name: pgx$/m);
    const description = /^description: (.+)$/m.exec(fm)?.[1] ?? '';
    expect(description).toMatch(/denied/i);
    expect(description.length).toBeGreaterThan(50);
    expect(description.length).toBeLessThan(1536);
    const links = [...text.matchAll(/\]\((references\/[^)]+)\)/g)].map((m) => m[1]!);
    expect(new Set(links)).toEqual(
      new Set([
        'references/claude-code.md',
        'references/lifecycle.md',
        'references/security.md',
        'references/troubleshooting.md',
      ]),
    );
    for (const l of links) expect(existsSync(join(REPO, 'skill', l)), l).toBe(true);
  });
});

describe('scripts/plugins-sync.mjs', () => {
  it('--check passes on a synced copy and lists every drifted file after tampering; sync repairs it', () => {
    tmp = mkdtempSync(join(tmpdir(), 'pgx-plugin-'));
    const copy = join(tmp, 'pgx');
    cpSync(PLUGIN, copy, { recursive: true });
    expect(sync(['--plugin-dir', copy]).status).toBe(0);
    const ok = sync(['--check', '--plugin-dir', copy]);
    expect(ok.status, ok.out).toBe(0);
    expect(ok.out).toContain('in sync');

    writeFileSync(
      join(copy, 'skills', 'pgx', 'SKILL.md'),
      readFileSync(join(copy, 'skills', 'pgx', 'SKILL.md'), 'utf8') + '\ntampered\n',
    );
    rmSync(join(copy, 'skills', 'pgx', 'references', 'security.md'));
    writeFileSync(join(copy, 'dist', 'chunks', 'old-chunk.js'), '// left over from an older build\n');
    chmodSync(join(copy, 'bin', 'pgx.js'), 0o644);
    const bad = sync(['--check', '--plugin-dir', copy]);
    expect(bad.status).toBe(1);
    const listed = bad.out
      .split('\n')
      .filter((l) => l.startsWith('  '))
      .map((l) => l.trim().split(/\s+/));
    expect(listed.map(([why, file]) => [why, file!.slice(file!.indexOf('pgx/') + 4)]).sort()).toEqual(
      [
        ['differs', 'skills/pgx/SKILL.md'],
        ['missing', 'skills/pgx/references/security.md'],
        ['mode', 'bin/pgx.js'],
        ['stale', 'dist/chunks/old-chunk.js'],
      ].sort(),
    );

    expect(sync(['--plugin-dir', copy]).status).toBe(0);
    expect(sync(['--check', '--plugin-dir', copy]).status).toBe(0);
    expect(existsSync(join(copy, 'dist', 'chunks', 'old-chunk.js'))).toBe(false);
  });

  it("hooks.json is the event table's: the committed file is byte for byte what the table gives", () => {
    expect(readFileSync(join(PLUGIN, 'hooks', 'hooks.json'), 'utf8')).toBe(pluginHooksText());
  });

  it("a changed event table is drift: --check names hooks.json, and sync writes the table's new timeout into it", () => {
    // A copy of the sources under the repo (so that the script's esbuild resolves from node_modules above it), with
    // one timeout of the table changed; the plugin copy beside it is the committed one.
    mkdirSync(join(REPO, '.tmp'), { recursive: true });
    tmp = mkdtempSync(join(REPO, '.tmp', 'plugins-sync-'));
    for (const p of ['scripts/plugins-sync.mjs', 'src', 'bin', 'skill', 'dist', 'package.json'])
      cpSync(join(REPO, p), join(tmp, p), { recursive: true });
    const copy = join(tmp, 'pgx');
    cpSync(PLUGIN, copy, { recursive: true });
    const table = join(tmp, 'src', 'hooks', 'claude', 'events.ts');
    const before = readFileSync(table, 'utf8');
    const after = before.replace(/(\{ event: 'SubagentStart', cli: 'subagent-start', timeout: )60\b/, '$161');
    expect(after).not.toBe(before);
    expect(sync(['--plugin-dir', copy], tmp).status).toBe(0); // the copy in step with this dist/: the table is the only change
    writeFileSync(table, after);

    const bad = sync(['--check', '--plugin-dir', copy], tmp);
    expect(bad.status, bad.out).toBe(1);
    expect(
      bad.out
        .split('\n')
        .filter((l) => l.startsWith('  '))
        .map((l) => l.trim().replace(/\s+.*pgx\//, ' ')),
    ).toEqual(['differs hooks/hooks.json']);
    expect(sync(['--plugin-dir', copy], tmp).status).toBe(0);
    expect(json(join(copy, 'hooks', 'hooks.json')).hooks.SubagentStart[0].hooks[0].timeout).toBe(61);
    expect(sync(['--check', '--plugin-dir', copy], tmp).status).toBe(0);
  });

  it('refuses unknown arguments (exit 2) and writes nothing', () => {
    tmp = mkdtempSync(join(tmpdir(), 'pgx-plugin-'));
    // --plugin-dir points at a temp dir so that a regression can never rewrite the real copy.
    expect(sync(['--chek', '--plugin-dir', tmp]).status).toBe(2);
    expect(sync(['--plugin-dir', tmp, '--chek']).status).toBe(2);
    expect(existsSync(join(tmp, 'dist'))).toBe(false);
  });
});
