// The GitHub Copilot CLI install, when there is one (pgx's hooks in the project's .github/hooks/*.json or in
// $COPILOT_HOME/settings.json): all six present, pointing at a launcher that exists (a portable project hook's: pgx on
// PATH), hooks not switched off (`disableAllHooks`), and, for a project install, the folder trusted or the prompt-mode
// opt-in set: `copilot -p` loads a project's hooks only then, without a word otherwise (decisions/470). No Copilot
// install: no check at all.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  COPILOT_HOOK_EVENTS,
  copilotHome,
  isPortableCopilotCommand,
  pgxEntriesOf,
  projectTrusted,
} from '../install/copilot.js';
import { pgxOnPath } from '../install/path-launcher.js';
import { isPlainObject, parseSettingsText, readSettingsFile } from '../lib/settings-file.js';
import { fail, ok, warn, type Check } from './types.js';

/** The Copilot CLI versions pgx's hook layer was measured on (scripts/install-copilot.sh pins the first). */
export const VERIFIED_COPILOT = ['1.0.102'];

/** Copilot's variables that make `-p` load a project's hooks in a folder that isn't trusted (measured on 1.0.102). */
export const promptModeOptIn = (env: NodeJS.ProcessEnv): boolean =>
  env.COPILOT_ALLOW_ALL === 'true' || env.GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS === 'true';

function hooksIn(file: string): { entries: ReturnType<typeof pgxEntriesOf>; disabled: boolean } {
  const root = parseSettingsText(readSettingsFile(file), file);
  return {
    entries: pgxEntriesOf(isPlainObject(root.hooks) ? root.hooks : {}),
    disabled: root.disableAllHooks === true,
  };
}

export function copilotCheck(projectDir: string, env: NodeJS.ProcessEnv = process.env): Check | undefined {
  const home = copilotHome(env);
  const userFile = join(home, 'settings.json');
  const hooksDir = join(projectDir, '.github', 'hooks');
  const projectFiles = existsSync(hooksDir)
    ? readdirSync(hooksDir)
        .filter((f) => f.endsWith('.json'))
        .map((f) => join(hooksDir, f))
    : [];
  let userDisabled = false;
  try {
    userDisabled = hooksIn(userFile).disabled;
  } catch (e) {
    return fail(
      'copilot',
      `${userFile} cannot be read: ${(e as Error).message}`,
      `fix ${userFile} by hand, then: pgx agent install copilot`,
    );
  }
  for (const [scope, files] of [
    ['project', projectFiles],
    ['user', [userFile]],
  ] as const) {
    for (const file of files) {
      let found;
      try {
        found = hooksIn(file);
      } catch (e) {
        return fail(
          'copilot',
          `${file} cannot be read: ${(e as Error).message}`,
          `fix ${file} by hand, then: pgx agent install copilot --scope ${scope}`,
        );
      }
      const { entries } = found;
      if (entries.length === 0) continue;
      const fix = `pgx agent install copilot --scope ${scope}`;
      const missing = COPILOT_HOOK_EVENTS.filter(
        (e) => !entries.some((h) => h.cli === e.cli && h.event === e.event),
      ).map((e) => e.event);
      if (missing.length) return fail('copilot', `pgx's Copilot hooks in ${file} lack ${missing.join(', ')}`, fix);
      if (userDisabled || found.disabled)
        return fail(
          'copilot',
          `Copilot's hooks are switched off (disableAllHooks in ${userDisabled ? userFile : file}): no subagent command is routed`,
          `remove disableAllHooks from ${userDisabled ? userFile : file}`,
        );
      const portable = entries.some((h) => isPortableCopilotCommand(h.command));
      const onPath = portable ? pgxOnPath(env) : undefined;
      if (portable && !onPath)
        return fail(
          'copilot',
          `pgx is not on PATH, where the hooks in ${file} find it: every subagent shell command is refused`,
          `put the directory holding pgx on PATH, or install pgx (README), then ${fix}`,
        );
      const launcher = /^'((?:[^']|'\\'')*)'/
        .exec(entries.find((h) => !isPortableCopilotCommand(h.command))?.command ?? '')?.[1]
        ?.replace(/'\\''/g, "'");
      if (launcher && !existsSync(launcher))
        return fail(
          'copilot',
          `the hooks in ${file} run ${launcher}, which no longer exists: every subagent command is refused`,
          fix,
        );
      const runs = onPath ? `; pgx on PATH: ${onPath}` : launcher ? `; launcher ${launcher}` : '';
      if (scope === 'project' && !projectTrusted(home, projectDir) && !promptModeOptIn(env)) {
        return warn(
          'copilot',
          `hooks installed (${file}${runs}), but ${projectDir} is not a trusted folder in ${join(home, 'config.json')}: ` +
            `\`copilot -p\` runs no project hook here (interactive copilot asks to trust the folder when it starts)`,
          'trust the folder when copilot asks, set GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true for copilot -p, or: ' +
            'pgx agent install copilot --scope user',
        );
      }
      return ok(
        'copilot',
        `hooks installed (${file}${runs})${scope === 'project' ? (promptModeOptIn(env) ? '; prompt-mode opt-in set' : '; folder trusted') : ''}; ` +
          `verified on copilot ${VERIFIED_COPILOT.join(', ')}`,
      );
    }
  }
  return undefined;
}
