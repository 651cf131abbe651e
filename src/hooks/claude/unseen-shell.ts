// A subagent's tools that run something pgx can't route to its branch (decision 520): CronCreate schedules a prompt
// the MAIN session runs later (its database work would land on the session's branch, perhaps after this subagent's
// branch retired); a skill's inline shell commands (`!`cmd`` and ```! blocks) run as it loads, with no Bash call, so
// no PreToolUse sees them (measured on 2.1.332); REPL (Code Mode) runs scripts whose shell pgx has not seen. Each is
// refused for a subagent with what to do instead (a plugin's skill whose file pgx can't find too: fail closed, unless
// the user turned inline shell off); the parent's calls go on as the user set them up.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type * as P from './payloads.js';
import { deny, type HookEnv, type HookResult } from './hook-handler.js';

const CRON_REASON =
  'pgx: a prompt scheduled with CronCreate runs later in the main session, not in this subagent, so its database ' +
  "work would land on the session's branch instead of your own (which may be retired by then); pgx refuses it for " +
  'subagents. Do the work now with the Bash tool (psql there reaches your own branch), or say in your final report ' +
  'what should be scheduled, for the main session to decide.';

const REPL_REASON =
  "pgx: a subagent's REPL scripts can't be routed to its own database branch (pgx routes Bash and Monitor commands), " +
  'so this one was refused: what it runs could reach a database shared with every other agent. Run shell commands ' +
  'with the Bash tool instead.';

const skillReason = (skill: string, file: string) =>
  `pgx: the skill "${skill}" runs shell commands as it loads (the \`!\` lines of ${file}), and Claude Code runs ` +
  "them with no Bash call that pgx could route to your own database branch: they would reach the session's " +
  'database. So pgx refused it for this subagent. Read that file and run the commands it needs with the Bash tool ' +
  'instead (there they reach your own branch).';

const unfoundSkillReason = (skill: string) =>
  `pgx: the skill "${skill}" comes from a plugin whose files pgx could not find (not in Claude Code's ` +
  "installed_plugins.json: loaded with --plugin-dir?), so pgx can't tell whether it runs shell commands as it loads, " +
  'with no Bash call that could be routed to your own database branch. So pgx refused it for this subagent. Run the ' +
  'commands it needs with the Bash tool instead; the user can set `disableSkillShellExecution: true` in Claude ' +
  "Code's settings, which pgx then trusts.";

/** A skill's inline shell: `!`cmd`` in its text, or a ```! fenced block (Claude Code's dynamic context). */
const INLINE_SHELL = /(^|[^\w`])!`[^`\n]+`|^\s*```!/m;

/** Claude Code's user directory: `$CLAUDE_CONFIG_DIR`, else ~/.claude. */
const claudeUserDir = (env: NodeJS.ProcessEnv) => env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude');

/** Where an installed plugin's files are: Claude Code's install record (plugins/installed_plugins.json, its `plugins`
 * keyed `name@marketplace`, each with an installPath). Unreadable or absent: none. */
function pluginRoots(plugin: string, userDir: string): string[] {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(join(userDir, 'plugins', 'installed_plugins.json'), 'utf8'));
  } catch {
    return [];
  }
  const plugins = (data as { plugins?: unknown } | null)?.plugins;
  if (!plugins || typeof plugins !== 'object') return [];
  const roots: string[] = [];
  for (const [key, value] of Object.entries(plugins)) {
    if (key.split('@')[0] !== plugin) continue;
    for (const e of Array.isArray(value) ? value : [value])
      if (typeof (e as { installPath?: unknown })?.installPath === 'string')
        roots.push((e as { installPath: string }).installPath);
  }
  return roots;
}

/**
 * The files a skill name may be read from: the project's and the user's skills and commands (`a:b` is a nested
 * command `a/b.md`, or a directory-scoped skill `a/.claude/skills/b`, or plugin a's skill or command b, found through
 * Claude Code's install record).
 */
export function skillFiles(skill: string, projectDir: string, env: NodeJS.ProcessEnv): string[] {
  if (!/^[\w.@/:-]+$/.test(skill) || skill.split(/[/:]/).includes('..')) return [];
  const user = claudeUserDir(env);
  const files: string[] = [];
  for (const base of [join(projectDir, '.claude'), user]) {
    files.push(join(base, 'skills', skill, 'SKILL.md'), join(base, 'commands', `${skill.split(':').join('/')}.md`));
  }
  const scoped = skill.lastIndexOf(':');
  if (scoped > 0)
    files.push(join(projectDir, skill.slice(0, scoped), '.claude', 'skills', skill.slice(scoped + 1), 'SKILL.md'));
  const colon = skill.indexOf(':');
  if (colon > 0) {
    const rest = skill.slice(colon + 1);
    for (const root of pluginRoots(skill.slice(0, colon), user))
      files.push(join(root, 'skills', rest, 'SKILL.md'), join(root, 'commands', `${rest.split(':').join('/')}.md`));
  }
  return files;
}

/** What a skill's files say: one runs inline shell (its file), none does, or a namespaced name (`plugin:skill`) whose
 * file pgx found nowhere (a plugin loaded with --plugin-dir, say): pgx can't tell, so it is not judged harmless. */
export type SkillShell = { kind: 'shell'; file: string } | { kind: 'none' } | { kind: 'unfound' };

/** Every place is read: which one Claude Code loads for a name found twice is its business, and either may be it.
 * pgx's own plugin (`pgx:…`) runs no inline shell (tests/blackbox/hooks-unseen-shell.test.ts reads its skills). */
export function skillRunningShell(skill: string, projectDir: string, env: NodeJS.ProcessEnv): SkillShell {
  let found = false;
  for (const file of skillFiles(skill, projectDir, env)) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    found = true;
    if (INLINE_SHELL.test(text)) return { kind: 'shell', file };
  }
  return found || !skill.includes(':') || skill.startsWith('pgx:') ? { kind: 'none' } : { kind: 'unfound' };
}

/** Claude Code's `disableSkillShellExecution` (a restrictive setting: true in any settings file turns inline shell off
 * for every skill, measured in 2.1.332's settings schema): then no skill runs a command pgx can't see. */
function skillShellDisabled(projectDir: string, env: NodeJS.ProcessEnv): boolean {
  const user = claudeUserDir(env);
  const files = [
    '/etc/claude-code/managed-settings.json',
    join(user, 'settings.json'),
    join(projectDir, '.claude', 'settings.json'),
    join(projectDir, '.claude', 'settings.local.json'),
  ];
  return files.some((f) => {
    try {
      return (
        (JSON.parse(readFileSync(f, 'utf8')) as { disableSkillShellExecution?: unknown })
          ?.disableSkillShellExecution === true
      );
    } catch {
      return false;
    }
  });
}

export function laterOrUnseenShellCall(
  p: P.PreToolUsePayload,
  kind: 'cron' | 'skill' | 'repl',
  h: HookEnv,
): HookResult {
  if (p.agent_id === undefined) return { outcome: `skipped:parent-${kind}` };
  if (kind === 'cron') return { output: deny(CRON_REASON), outcome: 'denied:cron' };
  if (kind === 'repl') return { output: deny(REPL_REASON), outcome: 'denied:repl' };
  const skill = p.tool_input.skill;
  if (typeof skill !== 'string') return { outcome: 'skipped:skill-without-name' };
  const judged = skillRunningShell(skill, h.config.projectDir, h.env);
  if (judged.kind === 'none') return { outcome: 'skipped:skill-without-shell' };
  if (skillShellDisabled(h.config.projectDir, h.env)) return { outcome: 'skipped:skill-shell-disabled' };
  return judged.kind === 'shell'
    ? { output: deny(skillReason(skill, judged.file)), outcome: 'denied:skill-inline-shell' }
    : { output: deny(unfoundSkillReason(skill)), outcome: 'denied:skill-unfound' };
}
