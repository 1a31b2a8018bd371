// `iw incidents list|show` and `iw incidents list --watch` (issue 30 item 2) over the CLI's
// evidence reads (03 Evidence reads: /v1/cli/connections/{int_…}/incidents[/{inc_…}], the
// connection's own mode).

import type { Command } from 'commander';
import { contextOf } from '../context.js';
import { renderTable } from '../output.js';
import { withExample } from '../program.js';
import { incidentsPath, watchIncidents } from './incidentWatch.js';
import { readPages } from './pages.js';
import { fields, oneOf, requireId, time, wholeNumber } from './values.js';

/** 03 Incident (list item). */
export interface Incident {
  id: string;
  connectionId: string;
  mode: string;
  environmentId: string;
  operationKey: string;
  kind: string;
  status: 'open' | 'resolved';
  summary: string;
  affectedRecords: number;
  resolutionState: string;
  firstObservedAt: string;
  lastObservedAt: string;
  createdAt: string;
  updatedAt: string;
  resolvedAt: string | null;
}

export interface IncidentPage {
  schemaVersion: 1;
  mode: string;
  items: Incident[];
  nextCursor: string | null;
}

interface Finding {
  kind: string;
  path: string;
  expected: string;
  observed: string;
  observationCount: number;
}

interface IncidentDetail extends Incident {
  findings: Finding[];
  observationIds: string[];
  evidenceTruncated: boolean;
}

interface ListOptions {
  integration: string;
  status?: 'open' | 'resolved';
  limit?: number;
  watch?: boolean;
  interval: number;
}

async function listCommand(this: Command): Promise<void> {
  const ctx = contextOf(this);
  const options = this.opts<ListOptions>();
  const connectionId = requireId(options.integration, 'int_', '--integration (the connection)');
  const api = await ctx.api();
  const workspace = await ctx.workspace();
  if (options.watch) {
    await watchIncidents({ ctx, api, workspace, connectionId, status: options.status, intervalMs: options.interval * 1000 });
    return;
  }
  const page = await readPages<IncidentPage, 'items'>('items', {
    api,
    path: incidentsPath(connectionId),
    query: { status: options.status },
    workspace,
    max: options.limit,
  });
  ctx.output.result(page, () =>
    renderTable(
      page.items,
      [
        { header: 'ID', value: (i) => i.id },
        { header: 'STATUS', value: (i) => i.status },
        { header: 'KIND', value: (i) => i.kind },
        { header: 'OPERATION', value: (i) => i.operationKey },
        { header: 'RECORDS', value: (i) => String(i.affectedRecords) },
        { header: 'LAST OBSERVED', value: (i) => time(i.lastObservedAt) },
        { header: 'SUMMARY', value: (i) => i.summary },
      ],
      ctx.output.columns,
      ctx.output.color,
    ),
  );
}

async function showCommand(this: Command, incidentId: string): Promise<void> {
  const ctx = contextOf(this);
  const { integration } = this.opts<{ integration: string }>();
  const connectionId = requireId(integration, 'int_', '--integration (the connection)');
  const id = requireId(incidentId, 'inc_', 'the incident');
  const body = await (await ctx.api()).request<{ schemaVersion: 1; incident: IncidentDetail }>({
    method: 'GET',
    path: `${incidentsPath(connectionId)}/${encodeURIComponent(id)}`,
    workspace: await ctx.workspace(),
  });
  ctx.output.result(body, () => {
    const i = body.incident;
    const head = fields([
      ['Incident', `${i.id} (${i.status}, ${i.resolutionState})`],
      ['Connection', `${i.connectionId} (${i.mode})`],
      ['Kind', i.kind],
      ['Operation', i.operationKey],
      ['Summary', i.summary],
      ['Records', String(i.affectedRecords)],
      ['Observed', `${time(i.firstObservedAt)} to ${time(i.lastObservedAt)}`],
      ['Resolved', time(i.resolvedAt)],
      ['Evidence', `${i.observationIds.length} observations${i.evidenceTruncated ? ' (truncated)' : ''}`],
    ]);
    const findings = renderTable(
      i.findings,
      [
        { header: 'FINDING', value: (f) => f.kind },
        { header: 'PATH', value: (f) => f.path },
        { header: 'EXPECTED', value: (f) => f.expected },
        { header: 'OBSERVED', value: (f) => f.observed },
        { header: 'COUNT', value: (f) => String(f.observationCount) },
      ],
      ctx.output.columns,
      ctx.output.color,
    );
    return `${head}\n\n${findings}`;
  });
}

export function registerIncidentCommands(program: Command): void {
  const incidents = program
    .command('incidents')
    .description("A connection's incidents: what its traffic did against its contract and rules");
  withExample(incidents, 'iw incidents list --integration int_01jx… --status open', 'iw incidents list --integration int_01jx… --watch');
  const integration = ['--integration <int_id>', 'the connection (int_…)'] as const;

  withExample(
    incidents
      .command('list')
      .description('List the incidents of a connection, newest first (every page unless --limit); --watch streams changes')
      .requiredOption(...integration)
      .option('--status <status>', 'only open or only resolved incidents', oneOf('open', 'resolved'))
      .option('--limit <n>', 'at most n incidents', wholeNumber(1))
      .option('--watch', 'print a line for each incident that appears or changes status, until Ctrl-C (exit 0)')
      .option('--interval <seconds>', 'with --watch: seconds between two reads', wholeNumber(1, 3600), 5)
      .action(listCommand),
    'iw incidents list --integration int_01jx… --status open',
    'iw incidents list --integration int_01jx… --watch --json | jq .id',
  );

  withExample(
    incidents
      .command('show')
      .argument('<incidentId>', 'the incident (inc_…)')
      .description('Show an incident with its findings')
      .requiredOption(...integration)
      .action(showCommand),
    'iw incidents show inc_01jx… --integration int_01jx…',
  );
}
