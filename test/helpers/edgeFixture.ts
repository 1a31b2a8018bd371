import { randomBytes } from 'node:crypto';
import type { ClickHouseClient } from '../../shared/clickhouse/client.js';
import { startAnalyzer, streamDrained } from './analyzer.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './context.js';
import { startEdge, testClickHouse, type Edge, type EdgeOverrides } from './ingest.js';
import { waitFor } from './wait.js';

/**
 * What the end-to-end tests of ingestion start before their first test: the management app on the
 * test PostgreSQL and Redis, a ClickHouse client, the uWebSockets.js edge in-process, and the API
 * key of a fresh workspace. One owner, one release point: `close` stops what it started, last first.
 */
export interface EdgeFixture {
  ctx: TestContext;
  clickhouse: ClickHouseClient;
  edge: Edge;
  /** A workspace API key of every scope (operator bootstrap). */
  apiKey: string;
  close(): Promise<void>;
}

/** The analyzer's options a test may set (the stream is the fixture's own). */
export type AnalyzerOverrides = Omit<NonNullable<Parameters<typeof startAnalyzer>[2]>, 'stream'>;

/** An EdgeFixture whose edge feeds an analyzer of its own through a stream of its own. */
export interface AnalysisFixture extends EdgeFixture {
  /** The analysis stream of this fixture only (`analysis:test:…`): no other file's jobs reach its analyzer. */
  stream: string;
  /** Stops the analyzer and starts another on the same stream, with `overrides` (by default the first one's). */
  restartAnalyzer(overrides?: AnalyzerOverrides): Promise<void>;
  /** Waits until the analyzer acknowledged every job of the stream (what the edge accepted is shipped first). */
  analysed(): Promise<void>;
}

/** Releases in reverse order of acquisition; a start that fails releases what it acquired, then throws. */
class Releases {
  private readonly steps: (() => Promise<unknown>)[] = [];
  add(step: () => Promise<unknown>): void {
    this.steps.push(step);
  }
  async releaseAll(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) await step();
  }
  async guard<T>(start: () => Promise<T>): Promise<T> {
    try {
      return await start();
    } catch (error) {
      await this.releaseAll().catch(() => undefined);
      throw error;
    }
  }
}

async function startParts(releases: Releases, edgeOverrides: EdgeOverrides): Promise<Omit<EdgeFixture, 'apiKey' | 'close'>> {
  const ctx = await createTestContext();
  releases.add(() => ctx.close());
  const clickhouse = testClickHouse(ctx);
  releases.add(() => clickhouse.close());
  const edge = await startEdge(ctx, clickhouse, edgeOverrides);
  releases.add(() => edge.close());
  return { ctx, clickhouse, edge };
}

/** The app, ClickHouse client, edge (with `edge` overrides) and a workspace API key. */
export function startEdgeFixture(edge: EdgeOverrides = {}): Promise<EdgeFixture> {
  const releases = new Releases();
  return releases.guard(async () => {
    const parts = await startParts(releases, edge);
    const apiKey = (await bootstrapWorkspace(parts.ctx)).apiKey.key;
    return { ...parts, apiKey, close: () => releases.releaseAll() };
  });
}

/**
 * An EdgeFixture plus an analyzer, both on a fresh analysis stream. `beforeAnalyzer` runs once the
 * edge is up and before the analyzer starts (rows the analyzer must find at its start).
 */
export function startAnalysisFixture(
  options: {
    edge?: Omit<EdgeOverrides, 'analysisStream'>;
    analyzer?: AnalyzerOverrides;
    beforeAnalyzer?: (ctx: TestContext, stream: string) => Promise<void>;
  } = {},
): Promise<AnalysisFixture> {
  const releases = new Releases();
  const stream = `analysis:test:${randomBytes(4).toString('hex')}`;
  return releases.guard(async () => {
    const parts = await startParts(releases, { ...options.edge, analysisStream: stream });
    const { ctx, clickhouse } = parts;
    await options.beforeAnalyzer?.(ctx, stream);
    const first = options.analyzer ?? {};
    let running = await startAnalyzer(ctx, clickhouse, { ...first, stream });
    releases.add(() => running.stop());
    const apiKey = (await bootstrapWorkspace(ctx)).apiKey.key;
    return {
      ...parts,
      apiKey,
      stream,
      async restartAnalyzer(overrides = first) {
        await running.stop();
        running = await startAnalyzer(ctx, clickhouse, { ...overrides, stream });
      },
      async analysed() {
        await waitFor(async () => ((await streamDrained(ctx, stream)) ? true : undefined), 20_000, 'the analysis stream to drain');
      },
      close: () => releases.releaseAll(),
    };
  });
}
