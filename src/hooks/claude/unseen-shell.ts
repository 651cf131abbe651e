// A subagent's tools that run something pgx can't route to its branch (decision 520): CronCreate schedules a prompt
// the MAIN session runs later (its database work would land on the session's branch, perhaps after this subagent's
// branch retired); a skill's inline shell commands (`!`cmd`` and ```! blocks) run as it loads, with no Bash call, so
// no PreToolUse sees them (measured on 2.1.332); REPL (Code Mode) runs scripts whose shell pgx has not seen. Each is
// refused for a subagent with what to do instead; the parent's calls go on as the user set them up.
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

/** A skill's inline shell: `!`cmd`` in its text, or a ```! fenced block (Claude Code's dynamic context). */
const INLINE_SHELL = /(^|[^\w`])!`[^`\n]+`|^\s*```!/m;

/**
 * The files a skill name may be read from: the project's and the user's skills and commands (`a:b` is a nested
 * command `a/b.md`, or a directory-scoped skill `a/.claude/skills/b`). A plugin's skill is not looked for.
 */
export function skillFiles(skill: string, projectDir: string, env: NodeJS.ProcessEnv): string[] {
  if (!/^[\w.@/:-]+$/.test(skill) || skill.split(/[/:]/).includes('..')) return [];
  const user = env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude');
  const files: string[] = [];
  for (const base of [join(projectDir, '.claude'), user]) {
    files.push(join(base, 'skills', skill, 'SKILL.md'), join(base, 'commands', `${skill.split(':').join('/')}.md`));
  }
  const scoped = skill.lastIndexOf(':');
  if (scoped > 0)
    files.push(join(projectDir, skill.slice(0, scoped), '.claude', 'skills', skill.slice(scoped + 1), 'SKILL.md'));
  return files;
}

/** A file of the skill's name that runs inline shell commands, or undefined. Every place is read: which one Claude
 * Code loads for a name found twice is its business, and either may be it. */
export function skillRunningShell(skill: string, projectDir: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const file of skillFiles(skill, projectDir, env)) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    if (INLINE_SHELL.test(text)) return file;
  }
  return undefined;
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
  const file = skillRunningShell(skill, h.config.projectDir, h.env);
  return file
    ? { output: deny(skillReason(skill, file)), outcome: 'denied:skill-inline-shell' }
    : { outcome: 'skipped:skill-without-shell' };
}
