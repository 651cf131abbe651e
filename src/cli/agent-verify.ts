// `pgx agent verify claude`: runs pgx's permission probe against this machine's Claude Code and records the verdict
// (src/verify/). Also the probe launcher's hidden entry, `pgx agent verify-probe`.
import { Option, type Command } from 'commander';
import { EXIT, PgxError } from '../lib/errors.js';
import { pgxHome } from '../project/home.js';
import { launcherPath } from '../hooks/claude/launcher.js';
import { builtInVerified, handOverVerification, releaseVerification } from '../hooks/claude/claude-version.js';
import { verifyClaudeCode, type VerifyResult } from '../verify/run.js';
import { claudeAmongAncestors } from '../verify/find-claude.js';
import { cellLine } from '../verify/cells.js';
import { runProbe } from '../verify/probe.js';
import { action, type CommonOpts } from './common.js';

interface VerifyOpts extends CommonOpts {
  claude?: string;
  forVersion?: string;
  nearPid?: string;
}

/** Registered by cli/commands.ts under `pgx agent`. */
export const under = 'agent';

export function register(agent: Command): void {
  agent
    .command('verify')
    .description(
      "check on this machine, offline, that routing keeps your permission rules' decisions on your Claude Code; records the verdict",
    )
    .argument('<client>', 'only "claude" for now')
    .option('--claude <path>', 'the Claude Code binary (default: `claude` on PATH)')
    .option('--json', 'machine-readable output')
    .addOption(
      hidden('--for-version <version>', 'SessionStart: verify this version (the running one), in the background'),
    )
    .addOption(
      hidden('--near-pid <pid>', 'SessionStart: the hook process whose ancestors include the running Claude Code'),
    )
    .action(
      action<VerifyOpts>(async (opts, out, cmd) => {
        if (cmd.args[0] !== 'claude')
          throw new PgxError(
            'USAGE',
            `Unknown client "${cmd.args[0]}".`,
            'Only `claude` (Claude Code) is supported: `pgx agent verify claude`.',
          );
        const home = pgxHome();
        const background = opts.forVersion;
        if (background) handOverVerification(home, background, process.pid);
        try {
          const claude =
            opts.claude ??
            (background && opts.nearPid ? claudeAmongAncestors(Number(opts.nearPid), background) : undefined);
          const r = await verifyClaudeCode({
            claude,
            home,
            pgxLauncher: launcherPath(),
            expectVersion: background,
            fault: process.env.PGX_VERIFY_FAULT || undefined,
            progress: (line) =>
              process.stderr.write(`${background ? `${new Date().toISOString()} ` : ''}pgx: ${line}\n`),
          });
          out.result({ ...r, built_in: builtInVerified().includes(r.claude_code) }, () => summary(r));
          return r.verified ? EXIT.ok : EXIT.doctor;
        } finally {
          if (background) releaseVerification(home, background);
        }
      }),
    );

  // The probe launcher's entry (src/verify/probe.ts): hooks and routed commands of a verification's own claude runs.
  agent
    .command('verify-probe', { hidden: true })
    .argument('[args...]')
    .allowUnknownOption()
    .helpOption(false)
    .action((args: string[]) => {
      process.exitCode = runProbe(args);
    });
}

const hidden = (flags: string, description: string) => new Option(flags, description).hideHelp();

function summary(r: VerifyResult): string {
  const secs = `${(r.elapsed_ms / 1000).toFixed(0)} s`;
  if (r.verified) {
    return [
      `Claude Code ${r.claude_code}: verified (${r.cells.length} cells, routed never weaker than unrouted; ${secs})`,
      `recorded in ${r.recorded}: pgx trusts this version like its built-in list, so routed subagent commands get your rules' decisions with no extra prompt`,
    ].join('\n');
  }
  return [
    `Claude Code ${r.claude_code}: NOT verified: ${r.failed.length} of ${r.cells.length} cells failed (${secs})`,
    ...r.cells.filter((c) => !c.ok).map((c) => `  ${cellLine(c)}`),
    `routed subagent commands keep asking for approval on this version${r.recorded ? ` (verdict recorded in ${r.recorded})` : ''}; ` +
      `pin a verified Claude Code, or re-run \`pgx agent verify claude\` after an update`,
  ].join('\n');
}
