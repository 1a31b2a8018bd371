import type { Command, Option } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { freshIwEnv, removeIwEnvs, runIw } from './helpers/iw.js';

// Issue 30 "Done means": every command's --help names every flag the command accepts. The command
// tree is the BUILT program's (cli/dist/program.js, `npm run build` first); each command's help is
// what `iw <command…> --help` prints as a subprocess.

const { createProgram } = (await import(new URL('../cli/dist/program.js', import.meta.url).href)) as {
  createProgram(version: string): Command;
};

/** Every command of the tree, root first, with the words that name it (`[]`, `['sessions', 'list']`…). */
function walk(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  return [{ path, command }, ...command.commands.flatMap((sub) => walk(sub, [...path, sub.name()]))];
}

/** The options a command accepts: its own and those of every command above it (global options). */
function acceptedOptions(command: Command): Option[] {
  const options: Option[] = [];
  for (let current: Command | null = command; current !== null; current = current.parent) options.push(...current.options);
  return options.filter((option) => !option.hidden);
}

const program = createProgram('0.0.0');
const commands = walk(program);

afterAll(removeIwEnvs);

describe('iw --help', () => {
  it('covers the command tree (the auth commands at least)', () => {
    const names = commands.map(({ path }) => path.join(' '));
    expect(names).toEqual(expect.arrayContaining(['', 'login', 'logout', 'whoami', 'sessions', 'sessions list', 'sessions revoke']));
  });

  it.each(commands.map(({ path, command }) => [path.join(' ') || '(root)', path, command] as const))(
    '%s: --help names every flag it accepts and ends with an example',
    async (_name, path, command) => {
      const result = await runIw([...path, '--help'], await freshIwEnv());
      expect(result.code, result.stderr).toBe(0);
      const help = result.stdout;
      expect(help).toContain(`Usage: iw${path.length > 0 ? ` ${path.join(' ')}` : ''}`);
      const flags = acceptedOptions(command).flatMap((option) => [option.long, option.short].filter((flag): flag is string => !!flag));
      expect(flags.length).toBeGreaterThan(0);
      for (const flag of flags)
        expect(help, `${flag} in the help of "${path.join(' ')}"`).toMatch(new RegExp(`(^|[\\s,])${flag}([\\s,]|$)`, 'm'));
      expect(help).toMatch(/\nExample:\n {2}\$ iw /);
    },
  );
});
