// `iw observations list` (issue 30 item 2): the observations of one exact connection (GET
// /v1/observations?integrationId=int_…, 00-decisions §5; 03: observation routes accept CLI OAuth
// and require the exact connection), newest first. Observations are traffic, so the list stops
// at `--limit` (default 25, the API's page) instead of reading every page; with --json the body's
// `nextCursor` continues after the last one printed.

import type { Command } from 'commander';
import { contextOf } from '../context.js';
import { renderTable } from '../output.js';
import { withExample } from '../program.js';
import { readPages } from './pages.js';
import { requireId, time, timestampOrAgo, wholeNumber } from './values.js';

interface Observation {
  eventId: string;
  eventType: string;
  operationKey: string;
  statusCode: number;
  durationMs: number;
  occurredAt: string;
  receivedAt: string;
  outcome: { accepted: boolean };
}

interface ObservationPage {
  items: Observation[];
  nextCursor: string | null;
}

interface ListOptions {
  integration: string;
  limit: number;
  eventType?: string;
  operationKey?: string;
  status?: string;
  from?: string;
  to?: string;
}

async function listCommand(this: Command): Promise<void> {
  const ctx = contextOf(this);
  const options = this.opts<ListOptions>();
  const connectionId = requireId(options.integration, 'int_', '--integration (the connection)');
  const page = await readPages<ObservationPage, 'items'>('items', {
    api: await ctx.api(),
    path: '/v1/observations',
    query: {
      integrationId: connectionId,
      eventType: options.eventType,
      operationKey: options.operationKey,
      status: options.status,
      from: options.from,
      to: options.to,
    },
    workspace: await ctx.workspace(),
    max: options.limit,
  });
  ctx.output.result(page, () =>
    renderTable(
      page.items,
      [
        { header: 'OCCURRED', value: (o) => time(o.occurredAt) },
        { header: 'EVENT TYPE', value: (o) => o.eventType },
        { header: 'OPERATION', value: (o) => o.operationKey },
        { header: 'STATUS', value: (o) => (o.statusCode === 0 ? 'no answer' : String(o.statusCode)) },
        { header: 'MS', value: (o) => String(Math.round(o.durationMs)) },
        { header: 'ACCEPTED', value: (o) => (o.outcome.accepted ? 'yes' : 'no') },
        { header: 'EVENT ID', value: (o) => o.eventId },
      ],
      ctx.output.columns,
      ctx.output.color,
    ),
  );
}

export function registerObservationCommands(program: Command): void {
  const observations = program
    .command('observations')
    .description("A connection's observed traffic (structure and hashes, never payload values)");
  withExample(observations, 'iw observations list --integration int_01jx… --from 2h');

  withExample(
    observations
      .command('list')
      .description('List the newest observations of a connection')
      .requiredOption('--integration <int_id>', 'the connection (int_…)')
      .option('--limit <n>', 'at most n observations', wholeNumber(1), 25)
      .option('--event-type <type>', 'only this event type')
      .option('--operation-key <key>', 'only this operation (as incidents name it)')
      .option('--status <status>', 'only this status: a class (2xx, 4xx, 5xx), one code (404), or transport_error')
      .option('--from <time>', 'received at or after (RFC 3339, or a duration before now such as 2h)', timestampOrAgo)
      .option('--to <time>', 'received before (RFC 3339, or a duration before now)', timestampOrAgo)
      .action(listCommand),
    'iw observations list --integration int_01jx… --limit 50',
    'iw observations list --integration int_01jx… --event-type order.created --from 2h --json',
  );
}
