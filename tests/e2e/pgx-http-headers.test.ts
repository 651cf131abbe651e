// What an HTTP hook's headers can carry, measured with the real Claude Code: where `$VAR` in `headers` is read from
// (the process's environment, a SessionStart CLAUDE_ENV_FILE export, the settings file's `env`), and whether a
// name that looks like a credential is interpolated. The shape of the HTTP transport's authentication rests on it
// (docs/pgx/local-dev/decisions/221-http-hooks-authentication.md). The recorder answers `{}`: it rewrites nothing,
// so pgx's own PreToolUse command entry stays the one rewriter.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeBin, cleanupRoots, CLAUDE_CODE_VERSION, describeRun, makeE2eProject, makeSource, runScenario, warnIfSkipped } from './pgx-harness.js';
import { sql } from '../helpers/pgx.js';

warnIfSkipped();
afterAll(cleanupRoots);

const NAMES = ['PGX_HTTP_FROM_PROCESS', 'PGX_HTTP_FROM_ENV_FILE', 'PGX_HTTP_FROM_SETTINGS', 'PGX_HOOK_SECRET', 'PGX_HOOK_TOKEN', 'CLAUDE_PROJECT_DIR', 'CLAUDE_CODE_SESSION_ID'];

describe.skipIf(!claudeBin)(`HTTP hook headers with real Claude Code ${CLAUDE_CODE_VERSION}`, () => {
  it('interpolate the process environment and the settings env, not CLAUDE_ENV_FILE exports', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push(req.headers);
        res.end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const source = await makeSource();
    try {
      const p = makeE2eProject({ source });
      const file = join(p.cwd, '.claude', 'settings.json');
      const settings = JSON.parse(readFileSync(file, 'utf8'));
      const headers = Object.fromEntries(NAMES.map((n) => [`x-${n.toLowerCase().replaceAll('_', '-')}`, `v:$${n}`]));
      settings.hooks.PreToolUse.push({ matcher: 'Bash', hooks: [{ type: 'http', url: `http://127.0.0.1:${port}/pre-tool-use`, headers, allowedEnvVars: NAMES, timeout: 10 }] });
      settings.hooks.SessionStart.push({ hooks: [{ type: 'command', command: 'echo "export PGX_HTTP_FROM_ENV_FILE=envfile" >> "$CLAUDE_ENV_FILE"' }] });
      settings.env = { PGX_HTTP_FROM_SETTINGS: 'settings' };
      writeFileSync(file, JSON.stringify(settings, null, 2));
      const run = await runScenario(
        p,
        { subagents: [{ marker: 'a', commands: ['echo hi'] }] },
        { allowedTools: 'Agent,Bash(echo:*)', env: { PGX_HTTP_FROM_PROCESS: 'process', PGX_HOOK_SECRET: 's3cret', PGX_HOOK_TOKEN: 't0ken' } },
      );
      expect(run.out.code, describeRun(run)).toBe(0);
      expect(seen.length, describeRun(run)).toBeGreaterThan(0);
      const h = seen[0]!;
      const got = Object.fromEntries(NAMES.map((n) => [n, h[`x-${n.toLowerCase().replaceAll('_', '-')}`]]));
      console.log('HTTP hook headers as received:', JSON.stringify(got));
      expect(got.PGX_HTTP_FROM_PROCESS).toBe('v:process');
      expect(got.PGX_HOOK_SECRET).toBe('v:s3cret');
      expect(got.PGX_HTTP_FROM_SETTINGS).toBe('v:settings');
      expect(got.PGX_HTTP_FROM_ENV_FILE).toBe('v:');
    } finally {
      server.close();
      await sql(`DROP DATABASE IF EXISTS ${source.name}`);
    }
  }, 300_000);
});
