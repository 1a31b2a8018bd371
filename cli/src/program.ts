// The command tree: global options on the root, one module per noun under commands/.

import { Command } from 'commander';
import { registerAuthCommands } from './commands/auth.js';
import { registerContractCommands } from './commands/contracts.js';
import { registerIncidentCommands } from './commands/incidents.js';
import { registerIntegrationCommands } from './commands/integrations.js';
import { registerObservationCommands } from './commands/observations.js';
import { registerRepairCommands } from './commands/repairs.js';
import { registerRuleCommands } from './commands/rules.js';
import { registerWorkspaceCommands } from './commands/workspaces.js';

export function createProgram(version: string): Command {
  const program = new Command('iw')
    .description('Integration Watch from the command line: workspaces, contracts, rules, incidents and reviewed repairs.')
    .version(version)
    .option('--profile <name>', 'the deployment profile to use (default: IW_PROFILE or "default")')
    .option('-w, --workspace <slug>', 'the workspace to act in (default: IW_WORKSPACE, then the one `iw use` saved)')
    .option('--json', "print the API's own JSON instead of tables")
    .showHelpAfterError()
    // Every command's --help lists the global options it accepts too (copied to each subcommand).
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', '\nExample:\n  $ iw login\n  $ iw use acme\n  $ iw incidents list --integration int_01...');
  registerAuthCommands(program);
  registerWorkspaceCommands(program);
  registerIntegrationCommands(program);
  registerContractCommands(program);
  registerRuleCommands(program);
  registerIncidentCommands(program);
  registerObservationCommands(program);
  registerRepairCommands(program);
  return program;
}

/** Adds the "Example" section every command's --help ends with. */
export function withExample(command: Command, ...lines: string[]): Command {
  return command.addHelpText('after', `\nExample:\n${lines.map((line) => `  $ ${line}`).join('\n')}`);
}
