// The Codex CLI install, when there is one (pgx's hooks in $CODEX_HOME/hooks.json or the project's .codex/hooks.json):
// all five present, pointing at a launcher that exists (a portable project hook's: pgx on PATH), trusted the way
// Codex checks it (the recorded trusted_hash is the hook's current hash: an edited hook is untrusted and skipped
// silently), the `codex` on PATH a verified version, and the sandbox letting agents reach the server (decisions/201,
// 203, 206). No Codex install: no check at all.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { codexHome, codexHooksPathFor, type CodexScope } from '../install/codex.js';
import {
  CODEX_HOOK_EVENTS,
  CODEX_PRE_TOOL_USE_MATCHER,
  handlersOf,
  isPortableCodexCommand,
} from '../install/codex-entries.js';
import { codexTrustHash, projectTrusted, trustStateOf } from '../install/codex-trust.js';
import { pgxOnPath } from '../install/path-launcher.js';
import { isPlainObject, parseSettingsText, readSettingsFile } from '../lib/settings-file.js';
import { codexSandboxNote } from '../install/codex-sandbox.js';
import { fail, ok, warn, type Check } from './types.js';

/** The Codex CLI versions pgx's hook layer was measured on (scripts/install-codex.sh pins the first). */
export const VERIFIED_CODEX = ['0.171.0'];

function codexVersionOnPath(): string | undefined {
  try {
    const out = execFileSync('codex', ['--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
    });
    return /(\d+\.\d+\.\d+)/.exec(out)?.[1];
  } catch {
    return undefined;
  }
}

export function codexCheck(projectDir: string, env: NodeJS.ProcessEnv = process.env): Check | undefined {
  const home = codexHome(env);
  const configPath = join(home, 'config.toml');
  for (const scope of ['project', 'user'] as CodexScope[]) {
    const path = codexHooksPathFor(scope, projectDir, home);
    let hooks;
    try {
      const root = parseSettingsText(readSettingsFile(path), path);
      hooks = handlersOf(isPlainObject(root.hooks) ? root.hooks : {}, path).filter((h) => h.cli);
    } catch (e) {
      return fail(
        'codex',
        `${path} cannot be read: ${(e as Error).message}`,
        `fix ${path} by hand, then: pgx agent install codex --scope ${scope}`,
      );
    }
    if (hooks.length === 0) continue;
    const fix = `pgx agent install codex --scope ${scope}`;
    const missing = CODEX_HOOK_EVENTS.filter((e) => !hooks.some((h) => h.cli === e.cli)).map((e) => e.event);
    if (missing.length) return fail('codex', `pgx's Codex hooks in ${path} lack ${missing.join(', ')}`, fix);
    // An install from before MCP calls were judged (matcher "Bash"): a subagent's database MCP call is never seen.
    const pre = hooks.find((h) => h.cli === 'pre-tool-use' && h.matcher !== CODEX_PRE_TOOL_USE_MATCHER);
    if (pre)
      return fail(
        'codex',
        `pgx's PreToolUse hook in ${path} matches ${JSON.stringify(pre.matcher ?? '')}, not MCP tool calls: a ` +
          `subagent's call to a database MCP server is not refused`,
        fix,
      );
    // A portable hook (project scope, decisions/206) runs the first pgx on PATH, checked as the shell would.
    const portable = hooks.some((h) => isPortableCodexCommand(h.command));
    const onPath = portable ? pgxOnPath(env) : undefined;
    if (portable && !onPath)
      return fail(
        'codex',
        `pgx is not on PATH, where the hooks in ${path} find it: every subagent shell command is refused (the ` +
          `session goes on, with a warning)`,
        `put the directory holding pgx on PATH (an npm --prefix ~/.local install: ~/.local/bin), or install pgx ` +
          `(README), then ${fix}`,
      );
    const launcher = /^'((?:[^']|'\\'')*)'/
      .exec(hooks.find((h) => !isPortableCodexCommand(h.command))?.command ?? '')?.[1]
      ?.replace(/'\\''/g, "'");
    if (launcher && !existsSync(launcher))
      return fail(
        'codex',
        `the hooks in ${path} run ${launcher}, which no longer exists: every subagent command is refused`,
        fix,
      );
    let state;
    let configText;
    try {
      configText = readSettingsFile(configPath);
      state = trustStateOf(configText, configPath);
    } catch (e) {
      return fail(
        'codex',
        `${configPath} cannot be read: ${(e as Error).message}`,
        `fix ${configPath} by hand, then: ${fix}`,
      );
    }
    const untrusted = hooks.filter(
      (h) => state[h.key]?.trusted_hash !== codexTrustHash(h.event, h.matcher, h.command, h.timeout),
    );
    if (untrusted.length)
      return fail(
        'codex',
        `${untrusted.length} of pgx's Codex hooks are not trusted in ${configPath} (Codex skips them without ` +
          `a word): ${untrusted.map((h) => h.event).join(', ')}`,
        fix,
      );
    if (scope === 'project' && !projectTrusted(configText, configPath, projectDir))
      return warn(
        'codex',
        `the hooks are in ${path}, but Codex runs a project's hooks only once the project is trusted`,
        `trust ${projectDir} when Codex asks, or: pgx agent install codex --scope user`,
      );
    const sandbox = codexSandboxNote(home);
    if (!sandbox.network_access)
      return warn(
        'codex',
        `hooks installed and trusted (${path}); but ${sandbox.text}`,
        `add [sandbox_workspace_write] network_access = true to ${configPath}`,
      );
    const version = codexVersionOnPath();
    if (version && !VERIFIED_CODEX.includes(version))
      return warn(
        'codex',
        `hooks installed and trusted (${path}); the codex on PATH is ${version}, which pgx was not verified on ` +
          `(verified: ${VERIFIED_CODEX.join(', ')})`,
        'use a verified Codex CLI version, or report how this one behaves',
      );
    const runs = onPath ? `; launcher pgx on PATH: ${onPath}` : '';
    return ok(
      'codex',
      `hooks installed and trusted (${path}${runs}); sandbox network on; codex ${version ?? '(not on PATH)'}`,
    );
  }
  return undefined;
}
