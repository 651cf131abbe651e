// Will routed subagent commands get the decisions the user's own permission rules give them, or prompt, and why?
// Reads pgx's rules in every settings scope, the workspace trust Claude Code needs before it applies project-scope
// rules, the permission mode, and the Claude Code version the hooks last ran under (the rewrite is verified per
// version: hooks/claude/claude-version.ts).
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  builtInVerified,
  isVerifiedClaudeCode,
  readVerdicts,
  verificationRunning,
  VERIFIED_CLAUDE_CODE_VERSIONS,
} from '../hooks/claude/claude-version.js';
import { hookLogPath, type HookLogLine } from '../hooks/claude/log.js';
import { EXIT_RULE, wrapperRuleCovers, wrapperRuleFor } from '../install/permission-rules.js';
import { settingsPathFor } from '../install/hook-events.js';
import { isPlainObject, parseSettingsText, readSettingsFile } from '../lib/settings-file.js';
import { installCmd, launchersInUse, type Found } from './hooks-check.js';
import { inProject } from './hook-log-check.js';
import { decide, fail, ok, warn, type Check, type DoctorContext } from './types.js';

/** Has the user accepted Claude Code's trust dialog for this directory (or a parent)? ~/.claude.json records it. */
export function workspaceTrusted(projectDir: string, home = homedir()): boolean {
  let projects: Record<string, unknown> = {};
  try {
    const root = JSON.parse(readFileSync(join(home, '.claude.json'), 'utf8')) as { projects?: Record<string, unknown> };
    if (isPlainObject(root.projects)) projects = root.projects;
  } catch {
    return false;
  }
  for (let dir = projectDir; ; dir = dirname(dir)) {
    const p = projects[dir];
    if (isPlainObject(p) && p.hasTrustDialogAccepted === true) return true;
    if (dirname(dir) === dir) return false;
  }
}

/**
 * The Claude Code version and permission mode of the most recent hook call that recorded them. The mode is a
 * project's (its settings' defaultMode, the session's choice): only this project's calls count for it, else another
 * project's mode was shown here (issue 30). The version is the machine's Claude Code, wherever it ran.
 */
export function lastSeenClaude(home: string, projectDir?: string): { version?: string; mode?: string } {
  let text: string;
  try {
    const buf = readFileSync(hookLogPath(home));
    text = buf.subarray(Math.max(0, buf.length - 256 * 1024)).toString('utf8');
  } catch {
    return {};
  }
  const seen: { version?: string; mode?: string } = {};
  for (const raw of text.split('\n').reverse()) {
    try {
      const l = JSON.parse(raw) as HookLogLine;
      seen.version ??= l.claude_code ?? undefined;
      if (projectDir === undefined || (typeof l.project_dir === 'string' && inProject(l, projectDir)))
        seen.mode ??= l.permission_mode ?? undefined;
      if (seen.version && seen.mode) break;
    } catch {
      // a torn line
    }
  }
  return seen;
}

function defaultMode(found: Found[]): string | undefined {
  for (const f of [...found].reverse()) {
    try {
      const perms = parseSettingsText(readSettingsFile(f.insp.path), f.insp.path).permissions;
      if (isPlainObject(perms) && typeof perms.defaultMode === 'string') return perms.defaultMode;
    } catch {
      // reported by the hooks check
    }
  }
  return undefined;
}

export function permissionsCheck(ctx: DoctorContext, found: Found[], home = homedir()): Check {
  const blanket = found.flatMap((f) => f.insp.rules.blanket.map((r) => ({ r, f })));
  if (blanket.length) {
    const b = blanket[0]!;
    return fail(
      'permissions',
      `${b.r} in ${b.f.insp.path} approves every command routed through pgx, so your deny rules do not apply ` +
        `to subagents' commands (and anyone can type the launcher to get past them)`,
      `${installCmd(b.f.scope)} (replaces it with the narrow rules)`,
    );
  }
  const launchers = launchersInUse(found);
  const covering = found.filter((f) =>
    f.insp.rules.wrapper.some((r) => launchers.some((l) => wrapperRuleCovers(r, l, ctx.projectDir))),
  );
  const exitAllowed = found.some((f) => f.insp.rules.exit);
  const scope = found.find((f) => f.insp.count > 0)?.scope ?? 'project';
  const seen = lastSeenClaude(ctx.home, ctx.projectDir);
  const mode = seen.mode ?? defaultMode(found);
  const modeNote = seen.mode
    ? `; mode last seen: ${seen.mode}`
    : mode
      ? `; permission mode: ${mode} (defaultMode in the settings; no hook call of this project seen yet)`
      : '';
  if (!covering.length || !exitAllowed) {
    const what = !covering.length
      ? `no wrapper rule for ${launchers.join(', ')} in ${ctx.projectDir}`
      : 'Bash(exit) is not allowed';
    // The plugin cannot ship permission rules: name the two to add by hand.
    const viaPlugin = !found.some((f) => f.insp.count > 0) && found.some((f) => f.plugin);
    const rules = [wrapperRuleFor(launchers[0]!, ctx.projectDir), EXIT_RULE]
      .filter(Boolean)
      .map((r) => JSON.stringify(r));
    const fix = viaPlugin
      ? `add ${rules.join(' and ')} to "permissions.allow" in ${settingsPathFor('project', ctx.projectDir, home)}`
      : installCmd(scope);
    return warn(
      'permissions',
      `${what}: every routed subagent command asks for approval (and is refused where nobody can answer, as in -p)${modeNote}`,
      fix,
    );
  }
  const projectScoped = covering.every((f) => f.scope !== 'user');
  if (projectScoped && !workspaceTrusted(ctx.projectDir, home)) {
    return decide(
      'permissions',
      `pgx's rules are in ${covering.map((f) => f.insp.path).join(', ')}, but Claude Code ignores project-scope ` +
        `rules until the workspace is trusted: routed commands ask until then${modeNote}`,
      `trust this folder or not: if you do, run \`claude\` in ${ctx.projectDir} once and accept the trust dialog ` +
        `(or keep pgx's rules for your user instead: ${installCmd('user')})`,
    );
  }
  if (seen.version && !isVerifiedClaudeCode(seen.version, process.env, ctx.home)) {
    const trust = ctx.config?.unverifiedClaudeCode === 'rules';
    const consequence = trust
      ? 'unverified_claude_code = "rules": routed commands are judged by your rules through the rewrite, unverified on this version'
      : 'every routed subagent command asks for approval until then';
    if (verificationRunning(ctx.home, seen.version)) {
      return warn(
        'permissions',
        `Claude Code ${seen.version}: pgx is verifying it on this machine now (\`pgx agent verify claude\`, started ` +
          `by SessionStart); ${consequence}${modeNote}`,
        'wait for it (under 2 minutes), then run `pgx agent doctor` again',
      );
    }
    const failed = readVerdicts(ctx.home)[seen.version];
    const newest = VERIFIED_CLAUDE_CODE_VERSIONS.at(-1);
    const acceptRisk = trust
      ? ''
      : `, or accept the risk: set [agent] unverified_claude_code = "rules" in ${ctx.config?.file ?? '.pgx.toml'}`;
    const verdict =
      failed && !failed.verified
        ? ` \`pgx agent verify claude\` failed on it (${failed.time.slice(0, 10)}: ${failed.failed[0] ?? 'no cell passed'}).`
        : '';
    return warn(
      'permissions',
      `the hooks last ran under Claude Code ${seen.version}; pgx's rewrite is verified on ${VERIFIED_CLAUDE_CODE_VERSIONS.join(', ')}.${verdict} ` +
        `${trust ? consequence : 'Every routed subagent command asks for approval until then'}${modeNote}`,
      verdict
        ? `pin Claude Code ${newest} (npm i -g @anthropic-ai/claude-code@${newest})${acceptRisk}`
        : `\`pgx agent verify claude\` (verifies ${seen.version} on this machine, under 2 minutes), pin Claude ` +
            `Code ${newest}${acceptRisk}`,
    );
  }
  const bypass = mode === 'bypassPermissions' ? ' (bypass mode: only deny rules apply, routed or not)' : '';
  return ok(
    'permissions',
    `routed commands get the decisions your own rules give the unrouted command: wrapper rule and Bash(exit) ` +
      `in ${covering.map((f) => f.insp.path).join(', ')}${projectScoped ? ', workspace trusted' : ''}; Claude ` +
      `Code ${seen.version ?? '(not seen yet)'}${verifiedHow(seen.version)}${modeNote}${bypass}`,
  );
}

/** How a Claude Code version the hooks ran under was verified: built in, or on this machine. */
function verifiedHow(version: string | undefined): string {
  if (!version) return '';
  return builtInVerified().includes(version)
    ? ' (verified)'
    : ' (verified on this machine by `pgx agent verify claude`)';
}
