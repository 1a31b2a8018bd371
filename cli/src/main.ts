// iw: the entry point. Builds the command tree, runs it, and turns every failure into its words
// on stderr (or the service's JSON body with --json) and an exit code as `gh` uses them.

import { readFileSync } from 'node:fs';
import { CommanderError } from 'commander';
import { createSession } from './auth/session.js';
import { useSession } from './context.js';
import { CliError, EXIT } from './errors.js';
import { createProgram } from './program.js';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

process.on('SIGINT', () => process.exit(EXIT.cancelled));

useSession(createSession());
const program = createProgram(version).exitOverride();
const json = process.argv.includes('--json');

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.failure);
  if (error instanceof CliError) {
    if (json && error.body) process.stdout.write(`${JSON.stringify(error.body, null, 2)}\n`);
    process.stderr.write(`iw: ${error.message}\n`);
    process.exit(error.exitCode);
  }
  process.stderr.write(`iw: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(EXIT.failure);
}
