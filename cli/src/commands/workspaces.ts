// `iw workspaces list` and `iw use <slug>` (issue 30 item 2): the user's workspaces (03 Account
// routes, GET /v1/cli/workspaces, every page) and the one a profile acts in. `--workspace` and
// IW_WORKSPACE override the saved one for a single command (context.ts).

import type { Command } from 'commander';
import { contextOf, type CommandContext } from '../context.js';
import { CliError } from '../errors.js';
import { renderTable } from '../output.js';
import { withExample } from '../program.js';
import { readPages } from './pages.js';

/** 03 "workspace item". */
export interface WorkspaceItem {
  id: string;
  slug: string;
  name: string;
  role: 'owner' | 'admin' | 'viewer';
}

interface WorkspacePage {
  schemaVersion: 1;
  items: WorkspaceItem[];
  nextCursor: string | null;
}

async function allWorkspaces(ctx: CommandContext): Promise<WorkspacePage> {
  return readPages<WorkspacePage, 'items'>('items', { api: await ctx.api(), path: '/v1/cli/workspaces' });
}

/** The workspace this command would act in, or undefined when none is chosen. */
async function chosenWorkspace(ctx: CommandContext): Promise<string | undefined> {
  try {
    return await ctx.workspace();
  } catch {
    return undefined;
  }
}

async function useWorkspace(this: Command, slug: string): Promise<void> {
  const ctx = contextOf(this);
  const page = await allWorkspaces(ctx);
  const workspace = page.items.find((item) => item.slug === slug);
  if (!workspace) {
    const known = page.items.map((item) => item.slug).join(', ') || 'none';
    throw new CliError(`${slug} is not one of your workspaces (yours: ${known}); see iw workspaces list`, undefined, 'workspace_not_found');
  }
  await ctx.saveWorkspace(workspace.slug);
  const profile = await ctx.profile();
  ctx.output.result(workspace, () => `Using ${workspace.slug} (${workspace.name}, ${workspace.role}) for profile ${profile.name}.`);
}

export function registerWorkspaceCommands(program: Command): void {
  const workspaces = program.command('workspaces').description('The workspaces you belong to');
  withExample(workspaces, 'iw workspaces list', 'iw use acme');

  withExample(
    workspaces
      .command('list')
      .description('List your workspaces (every page) and mark the one commands act in')
      .action(async function (this: Command) {
        const ctx = contextOf(this);
        const page = await allWorkspaces(ctx);
        const current = await chosenWorkspace(ctx);
        ctx.output.result(page, () =>
          renderTable(
            page.items,
            [
              { header: '', value: (w) => (w.slug === current ? '*' : '') },
              { header: 'SLUG', value: (w) => w.slug },
              { header: 'NAME', value: (w) => w.name },
              { header: 'ROLE', value: (w) => w.role },
              { header: 'ID', value: (w) => w.id },
            ],
            ctx.output.columns,
            ctx.output.color,
          ),
        );
      }),
    'iw workspaces list',
    'iw workspaces list --json',
  );

  const describeUse = (command: Command) =>
    withExample(
      command
        .argument('<slug>', 'the workspace slug (see iw workspaces list)')
        .description('Save the workspace the commands of this profile act in (--workspace or IW_WORKSPACE override it)')
        .action(useWorkspace),
      'iw use acme',
      'iw --profile staging use acme-staging',
    );
  describeUse(program.command('use'));
  describeUse(workspaces.command('use'));
}
