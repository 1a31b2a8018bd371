import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../cli/src/api.js';
import { idempotencyKey, settled } from '../cli/src/auth/idempotency.js';
import { type Profile, settlesKey } from '../cli/src/context.js';
import { CliError } from '../cli/src/errors.js';

// Issue 30 item 3: idempotency keys generated once and reused on retry, so a lost answer never
// repeats an operation. The CLI's key store on a configuration directory of this file's own.

let dir: string;
const staging: Profile = { name: 'staging', baseUrl: 'https://watch.staging.example.com' };
const local: Profile = { name: 'default', baseUrl: 'http://127.0.0.1:8081' };
const request = { action: 'repair.request', workspace: 'acme', incidentId: 'inc_1', body: { b: 1, a: [1, 2] } };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'iw-keys-'));
  process.env.IW_CONFIG_DIR = dir;
});

describe('idempotency keys', () => {
  it('gives an identical pending request its saved key, a settled one a new key', async () => {
    const first = await idempotencyKey(staging, request);
    expect(first).toMatch(/^iw-[0-9a-f-]{36}$/);
    // Same request, members in another order: the same fingerprint.
    expect(
      await idempotencyKey(staging, { incidentId: 'inc_1', body: { a: [1, 2], b: 1 }, workspace: 'acme', action: 'repair.request' }),
    ).toBe(first);
    expect(await idempotencyKey(staging, { ...request, incidentId: 'inc_2' })).not.toBe(first);
    expect(await idempotencyKey(local, request)).not.toBe(first);
    await settled(staging, first);
    const next = await idempotencyKey(staging, request);
    expect(next).not.toBe(first);
    await settled(staging, next);
  });

  it('concurrent commands of one request share one key', async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, () => idempotencyKey(local, { concurrent: true })));
    expect(new Set(keys).size).toBe(1);
    await settled(local, keys[0]);
    expect((await readdir(join(dir, 'pending'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('settles on a definite answer of the service, keeps the key for a retry otherwise', () => {
    expect(settlesKey(new ApiError(409, 'idempotency_conflict', { error: 'idempotency_conflict' }))).toBe(true);
    expect(settlesKey(new ApiError(400, 'invalid_repair_request', {}))).toBe(true);
    expect(settlesKey(new ApiError(401, 'unauthenticated', {}))).toBe(true);
    expect(settlesKey(new ApiError(429, 'repair_capacity_exceeded', {}))).toBe(false);
    expect(settlesKey(new ApiError(503, 'mode_cutover_write_paused', {}))).toBe(false);
    expect(settlesKey(new ApiError(500, undefined, {}))).toBe(false);
    expect(settlesKey(new CliError('cannot reach http://127.0.0.1:8081: fetch failed'))).toBe(false);
  });
});
