// The CLI: commander wiring only. Each command file registers its commands and calls the library.
import { Command, CommanderError } from 'commander';
import { registerBranchCommands } from './cli/agent-branches.js';
import { registerDiffCommand } from './cli/agent-diff.js';
import { registerPoolCommands } from './cli/agent-pool.js';
import { registerBrokerCommands } from './cli/agent-broker.js';
import { registerExecCommand } from './cli/agent-exec.js';
import { registerResetCommands } from './cli/agent-reset.js';
import { registerFreezeCommand } from './cli/agent-freeze.js';
import { registerHookCommand } from './cli/agent-hook.js';
import { registerInstallCommands } from './cli/agent-install.js';
import { registerVerifyCommands } from './cli/agent-verify.js';
import { registerLocalCommands } from './cli/local.js';
import { registerDoctorCommand } from './cli/doctor.js';
import { registerInitCommand } from './cli/init.js';
import { registerSourceCommands } from './cli/source.js';
import { registerTemplateCommands } from './cli/template.js';
import { registerRegistryCommands } from './cli/registry.js';
import { EXIT, EXIT_CODES_HELP, EXIT_CODES_POINTER, isPgxError, PgxError, redactSecrets } from './lib/errors.js';
import { refuseOutsideOwnBranch } from './cli/routed-guard.js';
import { printError } from './lib/output.js';

export function buildProgram(): Command {
  const program = new Command('pgx')
    .description('Give every coding agent its own PostgreSQL branch')
    .version('0.1.0')
    .enablePositionalOptions()
    .exitOverride() // inherited by every subcommand: parse errors become exit 2 below, not commander's 1
    // Inherited too (set before any subcommand exists): with --json a parse error becomes the JSON error object below.
    // commander quotes the argument it stumbled on (`unknown option '--urll=postgres://me:secret@…'`): masked too
    .configureOutput({ outputError: (text, write) => (wantsJson ? (parseError = redactSecrets(text)) : write(redactSecrets(text))) })
    .addHelpText('after', EXIT_CODES_HELP)
    // Inside a subagent's routed command, only its own branch (cli/routed-guard.ts): thrown before the action runs.
    .hook('preAction', (_program, actionCommand) => refuseOutsideOwnBranch(actionCommand))
    // the table once, in `pgx --help`; every other help names where it is
    .addHelpText('afterAll', ({ command }) => (command.parent ? EXIT_CODES_POINTER : ''));
  const agent = program.command('agent').description('branches for coding agents').enablePositionalOptions();
  registerExecCommand(agent);
  registerBranchCommands(agent, program);
  registerDiffCommand(agent);
  registerResetCommands(agent);
  registerFreezeCommand(agent);
  registerPoolCommands(agent);
  registerBrokerCommands(agent);
  registerHookCommand(agent);
  registerInstallCommands(agent);
  registerVerifyCommands(agent);
  registerLocalCommands(program);
  registerDoctorCommand(agent);
  registerInitCommand(program);
  registerSourceCommands(program);
  registerTemplateCommands(program);
  registerRegistryCommands(program);
  return program;
}

/** `--json` among pgx's own arguments (not a command's after `--`): parse errors are then reported as JSON too. */
const ownArgs = process.argv.slice(2, process.argv.includes('--') ? process.argv.indexOf('--') : undefined);
const wantsJson = ownArgs.includes('--json');
let parseError: string | undefined;

try {
  await buildProgram().parseAsync(process.argv);
} catch (e) {
  const execStream = ownArgs[0] === 'agent' && ownArgs[1] === 'exec' ? process.stderr : process.stdout; // exec's stdout is the command's
  // the preAction refusal (routed-guard.ts): printed as an action's error is
  if (isPgxError(e)) process.exitCode = printError(e, wantsJson, execStream);
  // commander already printed its message (unknown option, missing argument, bad choice; or help/version), unless
  // --json held it back for the JSON error object
  else if (!(e instanceof CommanderError)) throw e;
  else {
    process.exitCode = e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (parseError !== undefined) {
      const message = parseError.trim().replace(/^error: /, '');
      const err = new PgxError('USAGE', message.charAt(0).toUpperCase() + message.slice(1), `See \`pgx ${ownArgs.filter((a) => !a.startsWith('-')).slice(0, 2).join(' ')} --help\`.`.replace(/ +--help/, ' --help'));
      printError(err, true, execStream);
    }
  }
}
