// The commander program: pgx's global options, its help and exit-code table, the routed-command guard before every
// action, and every command group of commands.ts. Parsing errors are the entry's to print (src/entries/cli.ts).
import { Command } from 'commander';
import { EXIT_CODES_HELP, EXIT_CODES_POINTER, redactSecrets } from '../lib/errors.js';
import { COMMAND_GROUPS, type Wiring } from './commands.js';
import { refuseOutsideOwnBranch } from './routed-guard.js';

/** `onParseError`: with --json the entry holds commander's message back for its JSON error object; else it is written. */
export function buildProgram(wiring: Wiring, onParseError?: (text: string) => void): Command {
  const program = new Command('pgx')
    .description('Give every coding agent its own PostgreSQL branch')
    .version('0.1.0')
    .enablePositionalOptions()
    .exitOverride() // inherited by every subcommand: parse errors become exit 2 in the entry (entries/cli.ts), not commander's 1
    // Inherited too (set before any subcommand exists): with --json a parse error becomes the entry's JSON error object.
    // commander quotes the argument it stumbled on (`unknown option '--urll=postgres://me:secret@…'`): masked too
    .configureOutput({
      outputError: (text, write) => (onParseError ? onParseError(redactSecrets(text)) : write(redactSecrets(text))),
    })
    .addHelpText('after', EXIT_CODES_HELP)
    // Inside a subagent's routed command, only its own branch (cli/routed-guard.ts): thrown before the action runs.
    .hook('preAction', (_program, actionCommand) => refuseOutsideOwnBranch(actionCommand))
    // the table once, in `pgx --help`; every other help names where it is
    .addHelpText('afterAll', ({ command }) => (command.parent ? EXIT_CODES_POINTER : ''));
  const agent = program.command('agent').description('branches for coding agents').enablePositionalOptions();
  for (const group of COMMAND_GROUPS) group.register(group.under === 'agent' ? agent : program, wiring);
  return program;
}
