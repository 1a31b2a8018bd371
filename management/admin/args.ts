import { parseArgs } from 'node:util';
import { validEmail } from '../session/rules.js';
import { CommandError } from './commandError.js';
import type { ParsedCommand } from './commands.js';
import { OPTIONS, USAGE, optionsOf, type OptionName } from './commandTable.js';

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

const invalid = (message: string) =>
  new CommandError('invalid_arguments', `${message} (usage: ${USAGE}; npm run admin -- --help explains each)`);

function required(values: Values, name: Exclude<OptionName, 'legacy' | 'all'>): string {
  const value = values[name];
  if (value === undefined || value === '') throw invalid(`--${name} is required`);
  return value;
}

function integer(raw: string, name: string, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^\d+$/.test(raw) || Number(raw) > max) throw invalid(`--${name} must be a whole number up to ${max}`);
  return Number(raw);
}

function emailAddress(raw: string): string {
  try {
    return validEmail(raw);
  } catch {
    throw invalid('--email is not an e-mail address');
  }
}

function scopeList(raw: string): string[] | 'all' {
  return raw === 'all' ? 'all' : raw.split(',').map((scope) => scope.trim());
}

function only(values: Values, allowed: OptionName[]): void {
  const extra = Object.keys(values).filter((name) => name !== 'json' && !allowed.includes(name as OptionName));
  if (extra.length > 0) throw invalid(`this command takes no --${extra.join(', --')}`);
}

/**
 * The topic of a request for help, or null when `argv` is a command: `--help` or `-h` anywhere
 * (topic: the command before it, if any), or `help [command]`. An empty string asks for every command.
 */
export function helpRequest(argv: string[]): string | null {
  const first = argv[0] ?? '';
  if (first === 'help') return argv[1] ?? '';
  if (!argv.some((arg) => arg === '--help' || arg === '-h')) return null;
  return first.startsWith('-') ? '' : first;
}

/** Parses `<command> [subcommand] --options` of the operator CLI (00-decisions §2). `--json` is the only output form. */
export function parseCommand(argv: string[]): ParsedCommand {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: true }) as { values: Values; positionals: string[] };
  } catch (error) {
    throw invalid((error as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, action] = positionals;
  const noMorePositionals = (count: number) => {
    if (positionals.length > count) throw invalid(`unexpected argument "${positionals[count]}"`);
  };
  switch (command) {
    case 'bootstrap':
      noMorePositionals(1);
      only(values, optionsOf(command));
      return {
        command,
        input: {
          email: emailAddress(required(values, 'email')),
          ...(values.workspace === undefined ? {} : { workspace: values.workspace }),
          ...(values.scopes === undefined ? {} : { scopes: scopeList(values.scopes) }),
          legacy: values.legacy ?? false,
        },
      };
    case 'create-api-key':
      noMorePositionals(1);
      only(values, optionsOf(command));
      return {
        command,
        input: {
          workspace: required(values, 'workspace'),
          scopes: scopeList(required(values, 'scopes')),
          ...(values['expires-in'] === undefined ? {} : { expiresInSeconds: integer(values['expires-in'], 'expires-in') }),
        },
      };
    case 'revoke-api-key':
      noMorePositionals(1);
      only(values, optionsOf(command));
      return { command, input: { id: required(values, 'id') } };
    case 'maintenance':
      noMorePositionals(2);
      only(values, optionsOf(command));
      if (action !== 'pause' && action !== 'resume') throw invalid('maintenance takes pause or resume');
      return { command, action };
    case 'clock':
      noMorePositionals(2);
      if (action === 'advance') {
        only(values, optionsOf(command));
        return { command, input: { action, ms: integer(required(values, 'ms'), 'ms') } };
      }
      if (action === 'reset') {
        only(values, []);
        return { command, input: { action } };
      }
      throw invalid('clock takes advance --ms N or reset');
    case 'set-allowance':
      noMorePositionals(1);
      only(values, optionsOf(command));
      return {
        command,
        input: {
          account: required(values, 'account'),
          mode: required(values, 'mode'),
          limit: integer(required(values, 'limit'), 'limit', 2_147_483_647),
        },
      };
    case 'mail':
      noMorePositionals(1);
      only(values, optionsOf(command));
      return { command, input: { ...(values.email === undefined ? {} : { email: values.email }), all: values.all ?? false } };
    default:
      throw invalid(command === undefined ? 'a command is required' : `unknown command "${command}"`);
  }
}
