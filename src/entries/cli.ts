// The CLI bundle's entry (dist/pgx.js): everything bin/pgx.js does not answer on its light paths. Builds the program
// with the work the broker runs (broker-work.ts), parses argv, and is the one place an error becomes an exit code.
import { CommanderError } from 'commander';
import { buildProgram } from '../cli/program.js';
import { EXIT, isPgxError, PgxError } from '../lib/errors.js';
import { endQuietlyOnClosedPipe, printError } from '../lib/output.js';
import { brokerWork } from './broker-work.js';

/** `--json` among pgx's own arguments (not a command's after `--`): parse errors are then reported as JSON too. */
const ownArgs = process.argv.slice(2, process.argv.includes('--') ? process.argv.indexOf('--') : undefined);
const wantsJson = ownArgs.includes('--json');
let parseError: string | undefined;
endQuietlyOnClosedPipe(); // `pgx … | head`: the reader gone ends the command quietly, never with a stack

try {
  await buildProgram({ brokerWork }, wantsJson ? (text) => (parseError = text) : undefined).parseAsync(process.argv);
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
      const err = new PgxError(
        'USAGE',
        message.charAt(0).toUpperCase() + message.slice(1),
        `See \`pgx ${ownArgs
          .filter((a) => !a.startsWith('-'))
          .slice(0, 2)
          .join(' ')} --help\`.`.replace(/ +--help/, ' --help'),
      );
      printError(err, true, execStream);
    }
  }
}
