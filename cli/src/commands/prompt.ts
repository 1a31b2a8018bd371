// Questions before a destructive or analysis-changing write: asked on stderr (stdout keeps only
// results), answered on a terminal. Without a terminal nothing can be asked, so the command
// refuses (exit 2, as a declined confirmation) unless its flag (`--yes`, `--confirm <name>`)
// answered in advance. Ctrl-C or end of input at the question is a cancellation (exit 2).

import { createInterface } from 'node:readline';
import { CliError, EXIT } from '../errors.js';

/** Whether a question can be asked: stdin and stderr are both terminals. */
export function canAsk(): boolean {
  return process.stdin.isTTY === true && process.stderr.isTTY === true;
}

/** One line typed at the terminal after `question` (shown on stderr). */
export function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  return new Promise<string>((resolve, reject) => {
    // Whichever comes first settles the promise; closing after an answer changes nothing.
    rl.on('SIGINT', () => {
      process.stderr.write('\n');
      reject(new CliError('cancelled', EXIT.cancelled));
      rl.close();
    });
    rl.on('close', () => reject(new CliError('cancelled: no answer', EXIT.cancelled)));
    rl.question(question, (answer) => {
      resolve(answer);
      rl.close();
    });
  });
}

/**
 * Asks a yes/no question unless `yes` (the command's `--yes`) already answered it; refuses with
 * exit 2 when the answer is no, or when there is no terminal to ask on.
 */
export async function confirmOrCancel(question: string, yes: boolean | undefined, flag = '--yes'): Promise<void> {
  if (yes === true) return;
  if (!canAsk()) throw new CliError(`not confirmed: there is no terminal to ask on; pass ${flag} to confirm`, EXIT.cancelled);
  const answer = (await ask(`${question} [y/N] `)).trim().toLowerCase();
  if (answer !== 'y' && answer !== 'yes') throw new CliError('cancelled: nothing was changed', EXIT.cancelled);
}
