/**
 * The operator CLI's commands and options, in one table: the parser (args.ts) takes its options
 * and the commands' allowed options from it, and `--help` prints it.
 */

export const OPTIONS = {
  json: { type: 'boolean' },
  email: { type: 'string' },
  workspace: { type: 'string' },
  scopes: { type: 'string' },
  legacy: { type: 'boolean' },
  'expires-in': { type: 'string' },
  id: { type: 'string' },
  ms: { type: 'string' },
  account: { type: 'string' },
  mode: { type: 'string' },
  limit: { type: 'string' },
  all: { type: 'boolean' },
} as const;

export type OptionName = Exclude<keyof typeof OPTIONS, 'json'>;

export interface CommandEntry {
  name: string;
  /** One synopsis per form of the command. */
  usage: string[];
  summary: string;
  /** Every option the command takes, with what it means. */
  options: Partial<Record<OptionName, string>>;
}

export const COMMANDS = [
  {
    name: 'bootstrap',
    usage: ['bootstrap --email E [--workspace NAME] [--scopes s1,s2|all] [--legacy]'],
    summary: 'creates a verified user, its account, an active workspace, a console session and an API key (a rerun reuses them)',
    options: {
      email: "the user's e-mail address",
      workspace: 'the workspace name (default "Default workspace")',
      scopes: "the API key's scopes, comma-separated, or all (the default)",
      legacy: 'the workspace uses the legacy model instead of the canonical one',
    },
  },
  {
    name: 'create-api-key',
    usage: ['create-api-key --workspace SLUG --scopes s1,s2|all [--expires-in SECONDS]'],
    summary: 'creates an API key for a workspace',
    options: {
      workspace: 'the workspace slug',
      scopes: "the key's scopes, comma-separated, or all",
      'expires-in': 'lifetime in seconds, 60 to 31622400 (default: no expiry)',
    },
  },
  {
    name: 'revoke-api-key',
    usage: ['revoke-api-key --id ID'],
    summary: 'revokes an API key (again is a no-op)',
    options: { id: 'the key id (key_…)' },
  },
  {
    name: 'maintenance',
    usage: ['maintenance pause|resume'],
    summary: 'pauses or resumes authenticated writes (503 mode_cutover_write_paused while paused)',
    options: {},
  },
  {
    name: 'clock',
    usage: ['clock advance --ms N', 'clock reset'],
    summary: 'moves the test clock forward, or back to real time (needs ENABLE_TEST_CLOCK=1 here and in every running process)',
    options: { ms: "milliseconds to add to the clock's offset" },
  },
  {
    name: 'set-allowance',
    usage: ['set-allowance --account ID --mode sandbox --limit N'],
    summary: "sets an account's Sandbox monthly allowance of observations",
    options: { account: 'the account id (acct_…)', mode: 'sandbox (the only mode with an allowance)', limit: 'observations a month' },
  },
  {
    name: 'mail',
    usage: ['mail [--email E] [--all]'],
    summary: 'prints the mail waiting to be sent (verification links) and marks it sent',
    options: { email: 'only mail to this address', all: 'the latest mail, sent or not' },
  },
] as const satisfies readonly CommandEntry[];

export type CommandName = (typeof COMMANDS)[number]['name'];

/** The options `name` takes, for the parser. */
export function optionsOf(name: CommandName): OptionName[] {
  const entry: CommandEntry = COMMANDS.find((command) => command.name === name)!;
  return Object.keys(entry.options) as OptionName[];
}

/** Every synopsis on one line, for the `invalid_arguments` message. */
export const USAGE = COMMANDS.flatMap((command) => command.usage).join('; ');

const OPTION_COLUMN = 18;

function commandHelp(entry: CommandEntry): string[] {
  const options = Object.entries(entry.options).map(([name, meaning]) => `      --${name.padEnd(OPTION_COLUMN)}${meaning}`);
  return [...entry.usage.map((form) => `  ${form}`), `      ${entry.summary}`, ...options];
}

/**
 * The text of `--help`, `-h` and `help`: every command, or only `topic` when it names one
 * (`admin bootstrap --help`, `admin help bootstrap`).
 */
export function helpText(topic?: string): string {
  const entry = COMMANDS.find((command) => command.name === topic);
  if (entry) return [...commandHelp(entry), '', 'Every command: npm run admin -- --help', ''].join('\n');
  return [
    'usage: npm run --silent admin -- <command> [options] --json',
    '       npm run admin -- --help | <command> --help',
    '',
    'Operator commands. Each prints one JSON object on stdout: its result (exit 0), or',
    '{"error", "message"} (exit 1). The stores are those of the processes\' variables',
    '(DATABASE_URL, REDIS_URL; README "Configuration").',
    '',
    'commands:',
    ...COMMANDS.flatMap((command) => [...commandHelp(command), '']),
  ].join('\n');
}
