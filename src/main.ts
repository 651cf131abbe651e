// The CLI: commander wiring only. Each command file registers its commands and calls the library.
import { Command, CommanderError } from 'commander';
import { registerBranchCommands } from './cli/agent-branches.js';
import { registerPoolCommands } from './cli/agent-pool.js';
import { registerExecCommand } from './cli/agent-exec.js';
import { registerHookCommand } from './cli/agent-hook.js';
import { registerInstallCommands } from './cli/agent-install.js';
import { registerLocalCommands } from './cli/local.js';
import { registerDoctorCommand } from './cli/doctor.js';
import { registerInitCommand } from './cli/init.js';
import { EXIT_CODES_HELP } from './cli/common.js';
import { EXIT } from './errors.js';

export function buildProgram(): Command {
  const program = new Command('pgx')
    .description('Give every coding agent its own PostgreSQL branch')
    .version('0.1.0')
    .enablePositionalOptions()
    .exitOverride() // inherited by every subcommand: parse errors become exit 2 below, not commander's 1
    .addHelpText('after', EXIT_CODES_HELP);
  const agent = program.command('agent').description('branches for coding agents').enablePositionalOptions().addHelpText('after', EXIT_CODES_HELP);
  registerExecCommand(agent);
  registerBranchCommands(agent, program);
  registerPoolCommands(agent);
  registerHookCommand(agent);
  registerInstallCommands(agent);
  registerLocalCommands(program);
  registerDoctorCommand(agent);
  registerInitCommand(program);
  return program;
}

try {
  await buildProgram().parseAsync(process.argv);
} catch (e) {
  // commander already printed its message (unknown option, missing argument, bad choice; or help/version)
  if (!(e instanceof CommanderError)) throw e;
  process.exitCode = e.exitCode === 0 ? EXIT.ok : EXIT.usage;
}
