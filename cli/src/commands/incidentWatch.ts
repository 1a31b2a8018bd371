// `iw incidents list --watch`: polls a connection's incidents every `--interval` seconds and
// prints one line per incident that appeared or changed status since the previous read (with
// --json, the incident as the list route returns it, one object per line), until Ctrl-C.
//
// Each read costs little however long the history: the open incidents (every page), the newest
// incidents down to a minute before the newest one seen (catching new incidents that resolved
// between two reads), and one detail read for each incident that left the open list. The first
// read prints nothing: it is the state the changes are measured from (stderr says how many are
// open).
//
// Ctrl-C ends the watch with exit 0, not 2 (gh's "cancelled"): interrupting is the only way a
// watch ends, nothing is left half done, and everything it printed is complete, so a script
// reading its output should see success. gh gives 2 to an operation the user abandons (a
// declined prompt); its own watches (`gh run watch`) leave Ctrl-C to the signal.

import type { ApiClient, ApiError } from '../api.js';
import type { CommandContext } from '../context.js';
import type { Incident, IncidentPage } from './incidents.js';
import { readPages } from './pages.js';
import { time } from './values.js';

export interface WatchInput {
  ctx: CommandContext;
  api: ApiClient;
  workspace: string;
  connectionId: string;
  /** Print only incidents that are (now) in this status. */
  status?: 'open' | 'resolved';
  intervalMs: number;
}

export const incidentsPath = (connectionId: string) => `/v1/cli/connections/${encodeURIComponent(connectionId)}/incidents`;

/** How far below the newest creation time seen new incidents are still looked for. */
const LOOKBACK_MS = 60_000;

/** The list item members of an incident detail (03 Incident: detail adds these three). */
function listItemOf(detail: Incident & { findings?: unknown; observationIds?: unknown; evidenceTruncated?: unknown }): Incident {
  const { findings: _f, observationIds: _o, evidenceTruncated: _e, ...item } = detail;
  return item;
}

export async function watchIncidents(input: WatchInput): Promise<void> {
  const { ctx, api, workspace, connectionId } = input;
  const path = incidentsPath(connectionId);
  /** The last status printed or seen of every incident met so far. */
  const known = new Map<string, Incident['status']>();
  let open = new Set<string>();
  let newestCreatedMs = 0;

  const readOpen = () => readPages<IncidentPage, 'items'>('items', { api, path, query: { status: 'open' }, workspace });

  /** The newest incidents, page by page, down to LOOKBACK_MS below the newest creation seen. */
  async function readRecent(): Promise<Incident[]> {
    const items: Incident[] = [];
    let cursor: string | undefined;
    for (;;) {
      const query = new URLSearchParams({ limit: '100' });
      if (cursor !== undefined) query.set('cursor', cursor);
      const page = await api.request<IncidentPage>({ method: 'GET', path: `${path}?${query}`, workspace });
      items.push(...page.items);
      const oldest = page.items.at(-1);
      if (page.nextCursor === null || !oldest || Date.parse(oldest.createdAt) < newestCreatedMs - LOOKBACK_MS) return items;
      cursor = page.nextCursor;
    }
  }

  function print(incident: Incident): void {
    known.set(incident.id, incident.status);
    if (input.status !== undefined && incident.status !== input.status) return;
    const line = ctx.output.json
      ? JSON.stringify(incident)
      : [
          time(incident.status === 'resolved' ? (incident.resolvedAt ?? incident.updatedAt) : incident.createdAt),
          incident.status.padEnd(8),
          incident.id,
          incident.kind,
          incident.operationKey,
          `(${incident.affectedRecords} records)`,
          incident.summary,
        ].join('  ');
    process.stdout.write(`${line}\n`);
  }

  function noteCreated(incident: Incident): void {
    newestCreatedMs = Math.max(newestCreatedMs, Date.parse(incident.createdAt));
  }

  // The state changes are measured from.
  const first = await readOpen();
  for (const incident of first.items) {
    known.set(incident.id, incident.status);
    noteCreated(incident);
  }
  open = new Set(first.items.map((i) => i.id));
  for (const incident of await readRecent()) {
    if (!known.has(incident.id)) known.set(incident.id, incident.status);
    noteCreated(incident);
  }

  let stopped = false;
  let wake: (() => void) | undefined;
  // Ctrl-C: stop after the read in flight (or at once while waiting), exit 0 (see above). main.ts's
  // handler (exit 2 for every other command) is replaced for the watch.
  process.removeAllListeners('SIGINT');
  process.on('SIGINT', () => {
    stopped = true;
    wake?.();
  });
  ctx.output.progress(`Watching the incidents of ${connectionId} (${open.size} open) every ${input.intervalMs / 1000}s; Ctrl-C to stop.`);

  while (!stopped) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, input.intervalMs);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    if (stopped) break;
    const openNow = await readOpen();
    const recent = await readRecent();
    const openIds = new Set(openNow.items.map((i) => i.id));
    // New incidents (open, or already resolved by this read), oldest first.
    for (const incident of [...recent].reverse()) {
      noteCreated(incident);
      if (!known.has(incident.id)) print(incident);
    }
    for (const incident of openNow.items) {
      noteCreated(incident);
      if (known.get(incident.id) !== 'open') print(incident);
    }
    // Incidents that left the open list: read each to print its new status.
    for (const id of open) {
      if (openIds.has(id)) continue;
      const fromRecent = recent.find((i) => i.id === id);
      if (fromRecent) {
        if (known.get(id) !== fromRecent.status) print(fromRecent);
        continue;
      }
      try {
        const detail = await api.request<{ incident: Incident }>({ method: 'GET', path: `${path}/${encodeURIComponent(id)}`, workspace });
        if (known.get(id) !== detail.incident.status) print(listItemOf(detail.incident));
      } catch (error) {
        // Gone with its connection or workspace: nothing to print for it; any other error ends the watch.
        if ((error as ApiError).status !== 404) throw error;
        known.delete(id);
      }
    }
    open = openIds;
  }
}
