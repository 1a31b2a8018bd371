import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findingsOf, incidentsOf } from './helpers/analyzer.js';
import { createTestContext, uniqueEmail, type TestContext } from './helpers/context.js';
import { spawnStack, type SpawnedProcess } from './helpers/processes.js';

// README "Watch your first integration", run as written: its shell blocks in order, in one bash,
// against the three compiled processes (`npm run build` first), with only API, EDGE, WORK and
// EMAIL set from outside (the walkthrough's own defaults name `npm start`'s addresses).

const SECTION = '## Watch your first integration';

/** The shell blocks of the README section, in order. */
function walkthroughScript(): string {
  const readme = readFileSync('README.md', 'utf8');
  const start = readme.indexOf(SECTION);
  if (start < 0) throw new Error(`README has no "${SECTION}"`);
  const end = readme.indexOf('\n## ', start + SECTION.length);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]).join('\n');
}

function runBash(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return new Promise((done) => child.on('exit', (code) => done({ code, output })));
}

describe('README walkthrough', () => {
  let ctx: TestContext;
  const processes: SpawnedProcess[] = [];
  beforeAll(async () => {
    ctx = await createTestContext();
    processes.push(...(await spawnStack()));
  });
  afterAll(async () => {
    await Promise.all(processes.map((proc) => proc.stop()));
    await ctx?.close();
  });

  it('goes from a new workspace to the OpenAI contract, matched traffic and one drift incident', async () => {
    const [ingest, management] = processes;
    const work = mkdtempSync(join(tmpdir(), 'walkthrough-'));
    const script = walkthroughScript();
    expect(script).toContain('npm run --silent admin -- bootstrap');
    const { code, output } = await runBash(script, {
      API: management.url,
      EDGE: ingest.url,
      WORK: work,
      EMAIL: uniqueEmail('walkthrough'),
    });
    expect(code, output).toBe(0);
    expect(output).toContain('connection check: ok');

    const connectionId = (JSON.parse(readFileSync(join(work, 'integration.json'), 'utf8')) as { integration: { connectionId: string } })
      .integration.connectionId;
    const incidents = await incidentsOf(ctx, connectionId);
    // Traffic under the base path `/v1` matched `GET /models`: no unknown operation, one drift.
    expect(incidents.map((incident) => [incident.kind, incident.operation_key])).toStrictEqual([
      ['schema-drift', 'GET /models:response:200'],
    ]);
    expect((await findingsOf(ctx, incidents[0].id)).map((finding) => [finding.kind, finding.path])).toStrictEqual([
      ['undeclared_field', '/data/-/capabilities'],
    ]);
  }, 240_000);
});
