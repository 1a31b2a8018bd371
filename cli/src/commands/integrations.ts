import type { Command } from 'commander';

// Placeholder until the commands of this noun land (issue 30).
export function registerIntegrationCommands(_program: Command): void {}
