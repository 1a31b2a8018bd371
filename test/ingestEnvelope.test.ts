import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { IngestCredential } from '../ingest/common/credential.js';
import {
  BINDING_MEMBERS,
  INSERT_CHUNK_BYTES,
  OBSERVATION_ALIAS_COLUMNS,
  OBSERVATION_COLUMNS,
  batchRowPrefix,
  insertChunks,
  observationRow,
  tsvField,
  tsvToken,
} from '../ingest/common/observationsTable.js';
import { concreteSegment, timestampMs, timestampMsByPattern, validateEnvelope } from '../shared/envelope/validate.js';
import { shapeText } from '../shared/envelope/shapeText.js';
import { SHAPE_MAX_DEPTH, SHAPE_MAX_FIELDS, type SchemaShape } from '../shared/envelope/types.js';
import { isFresh, parseSignatureHeader, signatureMatches, computeSignature } from '../ingest/auth/signature.js';
import { envelope, type Collector } from './helpers/ingest.js';

// Envelope rules of document 03 ("Observation envelope", transport rules, operation table,
// Events 3) checked on the validator itself; the HTTP tests check that the edge reports them.

const api: Pick<Collector, 'integrationKey' | 'direction' | 'protocol'> = {
  integrationKey: 'svc_int_x',
  direction: 'outbound',
  protocol: 'http-api',
};
const queue: Pick<Collector, 'integrationKey' | 'direction' | 'protocol'> = {
  integrationKey: 'svc_int_x',
  direction: 'inbound',
  protocol: 'queue',
};

function issues(item: unknown): string[] {
  const check = validateEnvelope(item);
  return check.valid ? [] : check.issues;
}

const withTransport = (base: Record<string, unknown>, patch: Record<string, unknown>) => ({
  ...base,
  transport: { ...(base.transport as object), ...patch },
});
const withPayload = (base: Record<string, unknown>, patch: Record<string, unknown>) => ({
  ...base,
  payload: { ...(base.payload as object), ...patch },
});

function nestedShape(depth: number): unknown {
  let node: unknown = { kind: 'string' };
  for (let level = 1; level < depth; level += 1) node = { kind: 'object', fields: { child: node } };
  return node;
}

describe('envelope versions', () => {
  it('accepts 0.1, 0.2 and 0.3 with the shared field list', () => {
    for (const version of ['0.1', '0.2', '0.3']) expect(issues(envelope(api, { envelopeVersion: version }))).toEqual([]);
  });

  it('accepts payload.schemaInspected in 0.3 only (a later field in a strict older version is rejected)', () => {
    expect(issues(withPayload(envelope(api, { envelopeVersion: '0.3' }), { schemaInspected: false }))).toEqual([]);
    expect(issues(withPayload(envelope(api, { envelopeVersion: '0.3' }), { schemaInspected: true }))).toEqual([]);
    for (const version of ['0.1', '0.2']) {
      expect(issues(withPayload(envelope(api, { envelopeVersion: version }), { schemaInspected: false }))).toEqual([
        '/payload/schemaInspected is not allowed before envelope version 0.3',
      ]);
    }
    expect(issues(withPayload(envelope(api, { envelopeVersion: '0.3' }), { schemaInspected: 'no' }))).toEqual([
      '/payload/schemaInspected must be a boolean',
    ]);
  });

  it('rejects an unknown or missing version and still reports the other violations', () => {
    expect(issues(envelope(api, { envelopeVersion: '0.4' }))).toEqual(['/envelopeVersion must be one of 0.1, 0.2, 0.3']);
    expect(issues(envelope(api, { envelopeVersion: 3 }))).toEqual(['/envelopeVersion must be one of 0.1, 0.2, 0.3']);
    const { envelopeVersion: _omit, ...rest } = envelope(api);
    expect(issues({ ...rest, eventType: '' })).toEqual([
      '/envelopeVersion is required',
      '/eventType must be 1 to 128 printable ASCII characters without spaces',
    ]);
  });
});

describe('envelope fields', () => {
  it('needs every field of the table except correlation and the optional members', () => {
    const full = envelope(api);
    for (const field of [
      'eventId',
      'tenantId',
      'environmentId',
      'integrationId',
      'direction',
      'protocol',
      'occurredAt',
      'operationIdentityVersion',
      'eventType',
      'contract',
      'transport',
      'payload',
      'outcome',
    ]) {
      const { [field]: _drop, ...rest } = full;
      expect(issues(rest)).toEqual([`/${field} is required`]);
    }
    const { correlation: _c, ...withoutCorrelation } = full;
    expect(issues(withoutCorrelation)).toEqual([]);
    expect(issues({ ...full, correlation: {} })).toEqual([]);
    expect(issues({ ...full, outcome: { accepted: false } })).toEqual([]);
    expect(issues({ ...full, outcome: {} })).toEqual(['/outcome/accepted is required']);
    for (const member of ['method', 'routeTemplate', 'payloadLocation', 'statusCode', 'durationMs', 'attempt']) {
      const { [member]: _drop, ...transport } = full.transport as Record<string, unknown>;
      expect(issues({ ...full, transport })).toEqual([`/transport/${member} is required`]);
    }
    for (const member of ['storage', 'schemaFingerprint', 'schemaShape', 'redactionPolicyVersion']) {
      const { [member]: _drop, ...payload } = full.payload as Record<string, unknown>;
      expect(issues({ ...full, payload })).toEqual([`/payload/${member} is required`]);
    }
  });

  it('rejects unknown fields at every level, one issue each', () => {
    const full = envelope(api);
    expect(issues({ ...full, mode: 'live' })).toEqual(['/mode is not allowed']);
    expect(issues({ ...full, correlation: { rawId: '123' } })).toEqual(['/correlation/rawId is not allowed']);
    expect(issues({ ...full, contract: { observedFingerprint: null, version: 1 } })).toEqual(['/contract/version is not allowed']);
    expect(issues(withTransport(full, { headers: {} }))).toEqual(['/transport/headers is not allowed']);
    expect(issues(withPayload(full, { body: '{}' }))).toEqual(['/payload/body is not allowed']);
    expect(issues({ ...full, outcome: { accepted: true, value: 3 } })).toEqual(['/outcome/value is not allowed']);
    expect(issues({ ...full, mode: 'live', tenant: 'x' })).toEqual(['/mode is not allowed', '/tenant is not allowed']);
  });

  it('checks eventId, occurredAt, operationIdentityVersion and fingerprints', () => {
    const full = envelope(api);
    const eventIdIssue = ['/eventId must be evt_ followed by 1 to 124 letters, digits or . _ : -'];
    for (const eventId of ['evt_', 'event_1', 'evt_a b', `evt_${'a'.repeat(125)}`, 'evt_ä'])
      expect(issues({ ...full, eventId })).toEqual(eventIdIssue);
    expect(issues({ ...full, eventId: `evt_${'a'.repeat(124)}` })).toEqual([]);
    const timestampIssue = ['/occurredAt must be an ISO 8601 timestamp with a time zone, e.g. 2025-01-31T12:00:00.000Z'];
    for (const occurredAt of [
      '2025-01-31',
      '2025-01-31T12:00:00',
      '2025-02-30T00:00:00Z',
      '2025-13-01T00:00:00Z',
      '1969-12-31T23:59:59Z',
      'yesterday',
    ]) {
      expect(issues({ ...full, occurredAt })).toEqual(timestampIssue);
    }
    for (const occurredAt of ['2025-01-31T12:00:00Z', '2025-01-31T12:00:00.123456+02:00', '2024-02-29T23:59:59.9-05:30'])
      expect(issues({ ...full, occurredAt })).toEqual([]);
    expect(issues({ ...full, operationIdentityVersion: '2' })).toEqual(['/operationIdentityVersion must be "1"']);
    expect(issues({ ...full, contract: { observedFingerprint: null } })).toEqual([]);
    expect(issues({ ...full, contract: { observedFingerprint: 'sha256:ABC' } })).toEqual([
      '/contract/observedFingerprint must be null or sha256: followed by 64 lowercase hex characters',
    ]);
    expect(issues(withPayload(full, { schemaFingerprint: 'md5:1' }))).toEqual([
      '/payload/schemaFingerprint must be sha256: followed by 64 lowercase hex characters',
    ]);
    expect(issues(withPayload(full, { storage: 'inline' }))).toEqual(['/payload/storage must be none']);
  });

  it('reports a non-object item and wrong member types', () => {
    for (const item of [null, 3, 'x', [], true]) expect(issues(item)).toEqual(['envelope must be an object']);
    const full = envelope(api);
    expect(issues({ ...full, transport: [] })).toEqual(['/transport must be an object']);
    expect(issues({ ...full, outcome: { accepted: 'yes' } })).toEqual(['/outcome/accepted must be a boolean']);
    expect(issues({ ...full, direction: 'sideways' })).toEqual(['/direction must be one of inbound, outbound']);
  });

  it('limits the issues of one envelope to 20', () => {
    const full: Record<string, unknown> = envelope(api);
    for (let index = 0; index < 40; index += 1) full[`extra${index}`] = index;
    expect(issues(full)).toHaveLength(20);
  });
});

describe('transport rules and the operation table', () => {
  it('takes statusCode 0 or an integer from 100 through 599', () => {
    const full = envelope(api);
    for (const statusCode of [0, 100, 200, 599]) expect(issues(withTransport(full, { statusCode }))).toEqual([]);
    for (const statusCode of [1, 42, 99, 600, -1, 200.5, '200', null]) {
      expect(issues(withTransport(full, { statusCode }))).toEqual(['/transport/statusCode must be 0 or an integer from 100 through 599']);
    }
  });

  it('needs an absolute path without a query string for HTTP protocols and a label for queue and feed', () => {
    const full = envelope(api);
    const pathIssue = ['/transport/routeTemplate must be an absolute path without a query string for an HTTP protocol'];
    for (const routeTemplate of ['v1/orders', '/v1/orders?page=2', '/v1/orders#top'])
      expect(issues(withTransport(full, { routeTemplate }))).toEqual(pathIssue);
    expect(issues(withTransport(full, { routeTemplate: '/v1/orders/{id}/items' }))).toEqual([]);
    expect(issues(withTransport(full, { routeTemplate: '' }))).toEqual([
      '/transport/routeTemplate must be 1 to 256 printable ASCII characters without spaces',
    ]);
    expect(issues(withTransport(full, { routeTemplate: '/v1/a b' }))).toEqual([
      '/transport/routeTemplate must be 1 to 256 printable ASCII characters without spaces',
    ]);
    expect(issues(withTransport(full, { routeTemplate: `/${'a'.repeat(256)}` }))).toEqual([
      '/transport/routeTemplate must be 1 to 256 printable ASCII characters without spaces',
    ]);
    const q = envelope(queue);
    expect(issues(q)).toEqual([]);
    expect(issues(withTransport(q, { routeTemplate: 'projects/acme/subscriptions/orders-sub' }))).toEqual([]);
    expect(issues(withTransport(q, { routeTemplate: 'orders?x=1' }))).toEqual([
      '/transport/routeTemplate must be a queue, topic, subscription, feed or job label for protocol queue',
    ]);
  });

  it('refuses concrete ids and timestamps in a routeTemplate', () => {
    const issue = ['/transport/routeTemplate must be a stable template without message ids, run ids, timestamps or customer ids'];
    const full = envelope(api);
    for (const routeTemplate of [
      '/v1/orders/123456',
      '/v1/orders/3f2b8c1e-9d4a-4b7e-8f00-1a2b3c4d5e6f',
      '/v1/runs/2025-01-31',
      '/v1/objects/507f1f77bcf86cd799439011',
    ]) {
      expect(issues(withTransport(full, { routeTemplate }))).toEqual(issue);
    }
    expect(concreteSegment('/v2/orders/{orderId}/lines/12')).toBe(false);
    expect(concreteSegment('orders.created.v3')).toBe(false);
  });

  it('gives the same verdicts when it remembers them, also past the number of routes it keeps', () => {
    // More distinct routes than concreteSegment remembers, twice over: every second one is concrete.
    const routes = Array.from({ length: 2_500 }, (_, i) => (i % 2 === 0 ? `/v1/items${i}/{id}` : `/v1/items/${1_000_000 + i}`));
    for (let round = 0; round < 2; round += 1) {
      expect(routes.map((route) => concreteSegment(route))).toEqual(routes.map((_, i) => i % 2 === 1));
    }
  });

  it('binds direction, method and payloadLocation to the protocol', () => {
    expect(issues(envelope(api, { direction: 'inbound' }))).toEqual(['/direction must be outbound for protocol http-api']);
    expect(issues(withTransport(envelope(api), { payloadLocation: 'request' }))).toEqual([]);
    expect(issues(withTransport(envelope(api), { payloadLocation: 'message' }))).toEqual([
      '/transport/payloadLocation must be response or request for protocol http-api',
    ]);
    const webhook = envelope({ integrationKey: 'svc_int_x', direction: 'inbound', protocol: 'http-webhook' });
    expect(issues(webhook)).toEqual([]);
    expect(issues({ ...webhook, direction: 'outbound' })).toEqual(['/direction must be inbound for protocol http-webhook']);
    expect(issues(withTransport(webhook, { payloadLocation: 'response' }))).toEqual([
      '/transport/payloadLocation must be message for protocol http-webhook',
    ]);
    expect(issues(withTransport(webhook, { method: 'PUT' }))).toEqual([]);
    for (const direction of ['inbound', 'outbound'] as const) {
      for (const protocol of ['queue', 'scheduled-feed'] as const) {
        const item = envelope({ integrationKey: 'svc_int_x', direction, protocol });
        expect(issues(item)).toEqual([]);
        expect(issues(withTransport(item, { method: 'GET' }))).toEqual([`/transport/method must be POST for protocol ${protocol}`]);
        expect(issues(withTransport(item, { payloadLocation: 'request' }))).toEqual([
          `/transport/payloadLocation must be message for protocol ${protocol}`,
        ]);
      }
    }
    expect(issues(withTransport(envelope(api), { method: 'TRACE' }))).toEqual([
      '/transport/method must be one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS',
    ]);
  });

  it('bounds durationMs and attempt', () => {
    const full = envelope(api);
    expect(issues(withTransport(full, { durationMs: -1 }))).toEqual(['/transport/durationMs must be a number from 0 through 86400000']);
    expect(issues(withTransport(full, { durationMs: 0 }))).toEqual([]);
    expect(issues(withTransport(full, { attempt: 0 }))).toEqual(['/transport/attempt must be an integer from 1 through 1000']);
    expect(issues(withTransport(full, { attempt: 1.5 }))).toEqual(['/transport/attempt must be an integer from 1 through 1000']);
  });
});

describe('schemaShape', () => {
  const shaped = (schemaShape: unknown) => withPayload(envelope(api), { schemaShape });

  it('accepts every kind of 00-decisions §5, arrays with or without items', () => {
    const shape = {
      kind: 'object',
      fields: {
        s: { kind: 'string' },
        n: { kind: 'number' },
        i: { kind: 'integer' },
        b: { kind: 'boolean' },
        z: { kind: 'null' },
        empty: { kind: 'array' },
        list: { kind: 'array', items: { kind: 'object', fields: {} } },
      },
    };
    expect(issues(shaped(shape))).toEqual([]);
  });

  it('reports bad nodes with their JSON pointer', () => {
    expect(issues(shaped({ kind: 'map' }))).toEqual([
      '/payload/schemaShape/kind must be one of object, array, string, number, integer, boolean, null',
    ]);
    expect(issues(shaped({ kind: 'object' }))).toEqual(['/payload/schemaShape/fields is required']);
    expect(issues(shaped({ kind: 'string', fields: {} }))).toEqual(['/payload/schemaShape must not have fields unless its kind is object']);
    expect(issues(shaped({ kind: 'object', fields: {}, items: { kind: 'string' } }))).toEqual([
      '/payload/schemaShape must not have items unless its kind is array',
    ]);
    expect(issues(shaped({ kind: 'object', fields: { a: { kind: 'string', value: 'secret' } } }))).toEqual([
      '/payload/schemaShape/fields/a/value is not allowed',
    ]);
    expect(issues(shaped({ fields: {} }))).toEqual(['/payload/schemaShape/kind is required']);
  });

  it(`bounds depth at ${SHAPE_MAX_DEPTH} levels and ${SHAPE_MAX_FIELDS} fields per object`, () => {
    expect(issues(shaped(nestedShape(SHAPE_MAX_DEPTH)))).toEqual([]);
    const tooDeep = issues(shaped(nestedShape(SHAPE_MAX_DEPTH + 1)));
    const at32 = `/payload/schemaShape${'/fields/child'.repeat(SHAPE_MAX_DEPTH - 1)}`;
    expect(tooDeep).toEqual([
      `${at32}/kind must be one of string, number, integer, boolean, null: schemaShape is limited to 32 levels`,
      `${at32}/fields is not allowed: schemaShape is limited to 32 levels`,
    ]);
    // Far deeper than the limit: the validator stops at the bounded level, no stack growth.
    expect(issues(shaped(nestedShape(5000)))).toEqual(tooDeep);
    const wide = Object.fromEntries(Array.from({ length: SHAPE_MAX_FIELDS + 1 }, (_, index) => [`f${index}`, { kind: 'string' }]));
    expect(issues(shaped({ kind: 'object', fields: wide }))).toEqual([
      '/payload/schemaShape/fields must be an object of at most 500 fields whose names have at most 256 characters',
    ]);
    expect(issues(shaped({ kind: 'object', fields: { ['x'.repeat(257)]: { kind: 'string' } } }))).toEqual([
      '/payload/schemaShape/fields must be an object of at most 500 fields whose names have at most 256 characters',
    ]);
  });
});

describe('timestamps', () => {
  it('parses offsets and fractions to epoch milliseconds', () => {
    expect(timestampMs('2025-01-31T12:00:00Z')).toBe(Date.UTC(2025, 0, 31, 12));
    expect(timestampMs('2025-01-31T14:00:00.250+02:00')).toBe(Date.UTC(2025, 0, 31, 12, 0, 0, 250));
    expect(timestampMs('2025-01-31T24:00:00Z')).toBeNull();
    expect(timestampMs('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    expect(timestampMs('2000-02-29T00:00:00Z')).toBe(Date.UTC(2000, 1, 29));
    expect(timestampMs('2025-02-29T00:00:00Z')).toBeNull();
    expect(timestampMs('2100-02-29T00:00:00Z')).toBeNull();
    expect(timestampMs('2025-04-31T00:00:00Z')).toBeNull();
    expect(timestampMs('0099-06-01T00:00:00Z')).toBeNull();
    expect(timestampMs('2025-01-31T12:00:00+24:00')).toBeNull();
  });

  it('reads the UTC form by hand exactly as the pattern reads it', () => {
    const samples = [
      '2025-01-31T12:00:00Z',
      '2025-01-31T12:00:00.5Z',
      '2025-01-31T12:00:00.123456789Z',
      '2025-01-31T12:00:00.1234567890Z',
      '2025-01-31T12:00:00.Z',
      '2025-01-31T12:00:00z',
      '2025-01-31t12:00:00Z',
      '2025-01-31 12:00:00Z',
      '2025-1-31T12:00:00Z',
      '2025-01-31T12:00:0aZ',
      '2025-01-31T12:00:00.12a4Z',
      '+2025-01-31T12:00:00Z',
      '2025-01-31T12:00:00.000+00:00',
      '1969-12-31T23:59:59.999Z',
      '1970-01-01T00:00:00Z',
      '2024-02-29T23:59:59.999Z',
      '2023-02-29T00:00:00Z',
      '2025-13-01T00:00:00Z',
      '2025-00-10T00:00:00Z',
      '2025-01-00T00:00:00Z',
      '2025-01-31T23:60:00Z',
      '2025-01-31T23:59:60Z',
      '2025-01-31T12:00:00Z ',
    ];
    for (const sample of samples) expect([sample, timestampMs(sample)]).toEqual([sample, timestampMsByPattern(sample)]);
    fc.assert(
      fc.property(
        fc.date({ min: new Date(Date.UTC(1960, 0, 1)), max: new Date(Date.UTC(2200, 0, 1)), noInvalidDate: true }),
        fc.stringMatching(/^(\.\d{1,10})?$/),
        (date, fraction) => {
          const text = `${date.toISOString().slice(0, 19)}${fraction}Z`;
          return timestampMs(text) === timestampMsByPattern(text);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('property: the validator never throws', () => {
  it('on arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const check = validateEnvelope(value);
        return check.valid || check.issues.length > 0;
      }),
      { numRuns: 500 },
    );
  });

  it('on a valid envelope with one member replaced by arbitrary JSON', () => {
    const base = envelope(api);
    const paths = [
      ['eventId'],
      ['transport', 'statusCode'],
      ['transport'],
      ['payload', 'schemaShape'],
      ['payload', 'schemaShape', 'fields'],
      ['correlation'],
      ['outcome', 'accepted'],
      ['occurredAt'],
      ['contract', 'observedFingerprint'],
    ];
    fc.assert(
      fc.property(fc.constantFrom(...paths), fc.jsonValue(), (path, value) => {
        const copy = structuredClone(base) as Record<string, unknown>;
        let target = copy;
        for (const key of path.slice(0, -1)) target = target[key] as Record<string, unknown>;
        target[path[path.length - 1]] = value;
        const check = validateEnvelope(copy);
        return check.valid
          ? check.envelope.eventId.startsWith('evt_')
          : check.issues.every((issue) => typeof issue === 'string' && issue.length > 0);
      }),
      { numRuns: 500 },
    );
  });
});

describe('signature header (03 Ingestion: t=<unix seconds>,v1=<64 lowercase hex>)', () => {
  const hex = 'a'.repeat(64);

  it('parses exactly the documented form', () => {
    expect(parseSignatureHeader(`t=1700000000,v1=${hex}`)).toMatchObject({ timestamp: '1700000000', seconds: 1700000000 });
    for (const bad of [
      undefined,
      '',
      `v1=${hex},t=1700000000`,
      `t=1700000000,v1=${'A'.repeat(64)}`,
      `t=1700000000,v1=${'a'.repeat(63)}`,
      `t=1700000000, v1=${hex}`,
      `t=-1,v1=${hex}`,
      `t=1.5,v1=${hex}`,
      `t=1700000000,v1=${hex},v0=${hex}`,
      `t=,v1=${hex}`,
      ` t=1700000000,v1=${hex}`,
    ]) {
      expect(parseSignatureHeader(bad)).toBeNull();
    }
  });

  it('property: never throws, and accepts a value iff it matches the format', () => {
    const format = /^t=\d{1,12},v1=[0-9a-f]{64}$/;
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), (value) => (parseSignatureHeader(value) !== null) === format.test(value)),
      { numRuns: 2000 },
    );
    const valid = fc
      .tuple(fc.integer({ min: 0, max: 999_999_999_999 }), fc.uint8Array({ minLength: 32, maxLength: 32 }))
      .map(([t, bytes]) => ({ t, hex: Buffer.from(bytes).toString('hex') }));
    fc.assert(
      fc.property(valid, ({ t, hex: v1 }) => {
        const parsed = parseSignatureHeader(`t=${t},v1=${v1}`);
        return parsed !== null && parsed.seconds === t && parsed.v1.toString('hex') === v1;
      }),
      { numRuns: 500 },
    );
  });

  it('is fresh within 300 seconds either side and matches only the exact signed bytes', () => {
    const now = 1_700_000_000_000;
    const at = (t: number) => parseSignatureHeader(`t=${t},v1=${hex}`)!;
    expect(isFresh(at(1_700_000_000 - 300), now)).toBe(true);
    expect(isFresh(at(1_700_000_000 + 300), now)).toBe(true);
    expect(isFresh(at(1_700_000_000 - 301), now)).toBe(false);
    expect(isFresh(at(1_700_000_000 + 301), now)).toBe(false);
    const body = Buffer.from('{"envelopes":[]}');
    const v1 = computeSignature('svc_ing_secret', '1700000000', body).toString('hex');
    const header = parseSignatureHeader(`t=1700000000,v1=${v1}`)!;
    expect(signatureMatches('svc_ing_secret', header, body)).toBe(true);
    expect(signatureMatches('svc_ing_other', header, body)).toBe(false);
    expect(signatureMatches('svc_ing_secret', header, Buffer.from('{"envelopes":[] }'))).toBe(false);
  });
});

describe('observation rows (TabSeparated)', () => {
  const shapeArb: fc.Arbitrary<SchemaShape> = fc.letrec<{ node: SchemaShape }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom<SchemaShape>(
        { kind: 'string' },
        { kind: 'number' },
        { kind: 'integer' },
        { kind: 'boolean' },
        { kind: 'null' },
        { kind: 'array' },
      ),
      fc
        .dictionary(fc.string({ maxLength: 12, unit: 'binary' }), tie('node'), { maxKeys: 4 })
        .map((fields): SchemaShape => ({ kind: 'object', fields })),
      tie('node').map((items): SchemaShape => ({ kind: 'array', items })),
    ),
  })).node;

  it('serialises schemaShape exactly like JSON.stringify of the kind-first tree', () => {
    fc.assert(
      fc.property(shapeArb, (shape) => shapeText(shape) === JSON.stringify(shape)),
      { numRuns: 1000 },
    );
    const awkward: SchemaShape = {
      kind: 'object',
      fields: {
        'a"b': { kind: 'string' },
        'c\\d': { kind: 'null' },
        'e\nf': { kind: 'array' },
        '\ud800': { kind: 'integer' },
        ü: { kind: 'number' },
      },
    };
    expect(shapeText(awkward)).toBe(JSON.stringify(awkward));
    // Members in another order give the same text.
    expect(shapeText({ items: { kind: 'string' }, kind: 'array' })).toBe('{"kind":"array","items":{"kind":"string"}}');
  });

  it('escapes exactly what TabSeparated needs, so a field never spills into the next', () => {
    expect(tsvField('plain/value:{x}')).toBe('plain/value:{x}');
    expect(tsvField('a\\b\tc\nd\re\0f\bg\fh')).toBe('a\\\\b\\tc\\nd\\re\\0f\\bg\\fh');
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        const field = tsvField(value);
        return (
          !/[\t\n\r\0]/.test(field)
          && field.replace(
            /\\(.)/g,
            (_, c: string) => (({ t: '\t', n: '\n', r: '\r', '0': '\0', b: '\b', f: '\f' }) as Record<string, string>)[c] ?? c,
          ) === value
        );
      }),
      { numRuns: 1000 },
    );
  });

  it('escapes a value without control characters (tokens, JSON text) as tsvField does', () => {
    expect(tsvToken('a\\b\\\\c')).toBe(tsvField('a\\b\\\\c'));
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }).map((value) => value.replace(/[\u0000-\u001f]/g, '\\')),
        (value) => tsvToken(value) === tsvField(value),
      ),
      { numRuns: 1000 },
    );
  });

  it('writes exactly the stored columns of the observations table, one value each, and the binding its ALIAS columns read', () => {
    // The table as 0002 leaves it: stored columns, and ALIAS columns computed from them.
    const sql = readFileSync(new URL('../migrations/clickhouse/0002_observation_binding.sql', import.meta.url), 'utf8');
    const table = sql.slice(sql.indexOf('CREATE TABLE'), sql.indexOf('ENGINE'));
    const columns = [...table.matchAll(/^\s{2}([a-z_]+)\s+(String|UInt\d+|Float64|Date)\b(.*)$/gm)];
    const stored = columns.filter((match) => !match[3].includes('ALIAS')).map((match) => match[1]);
    const aliases = columns.filter((match) => match[3].includes('ALIAS'));
    expect(stored).toHaveLength(26);
    expect([...OBSERVATION_COLUMNS].sort()).toEqual([...stored].sort());
    expect([...OBSERVATION_ALIAS_COLUMNS].sort()).toEqual(aliases.map((match) => match[1]).sort());
    // Each binding member is read back from its own position of the binding.
    for (const [position, [column]] of BINDING_MEMBERS.entries()) {
      expect(aliases.find((match) => match[1] === column)?.[3]).toContain(`splitByChar('|', binding)[${position + 1}]`);
    }
    const check = validateEnvelope(envelope(api));
    if (!check.valid) throw new Error('invalid fixture');
    const credential = {
      connectionId: 'int_1',
      workspaceId: 'ws_1',
      accountId: 'acct_1',
      integrationId: 'wint_1',
      integrationKey: 'svc_int_1',
      tenantId: 'ten_1',
      environmentId: 'env_1',
      mode: 'live',
      direction: 'outbound',
      protocol: 'http-api',
    } as IngestCredential;
    const prefix = batchRowPrefix({ credential, batchId: 'b1', receivedAtMs: 1, receivedDate: '1970-01-01' });
    const line = observationRow(prefix, check.envelope, check.occurredAtMs, check.shape);
    expect(line.endsWith('\n')).toBe(true);
    const values = line.slice(0, -1).split('\t');
    expect(values).toHaveLength(26);
    expect(values[OBSERVATION_COLUMNS.indexOf('event_id')]).toBe(check.envelope.eventId);
    expect(values[OBSERVATION_COLUMNS.indexOf('connection_id')]).toBe('int_1');
    expect(values[OBSERVATION_COLUMNS.indexOf('binding')]).toBe('ws_1|acct_1|wint_1|svc_int_1|ten_1|env_1|live|outbound|http-api');
    // A member holding the separator would shift the others: the batch is refused instead.
    expect(() =>
      batchRowPrefix({ credential: { ...credential, tenantId: 'ten|1' }, batchId: 'b1', receivedAtMs: 1, receivedDate: '1970-01-01' }),
    ).toThrow(/separator/);
    expect(JSON.parse(values[OBSERVATION_COLUMNS.indexOf('schema_shape')])).toEqual(check.envelope.payload.schemaShape);
  });
});

describe('insert body chunks', () => {
  it('joins the pieces in order into chunks no larger than INSERT_CHUNK_BYTES, a larger piece alone', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: INSERT_CHUNK_BYTES + 10 }), { maxLength: 12 }), (sizes) => {
        const pieces = sizes.map((size, index) => Buffer.alloc(size, index + 1));
        const chunks = [...insertChunks(pieces)];
        expect(Buffer.concat(chunks).equals(Buffer.concat(pieces))).toBe(true);
        for (const chunk of chunks) {
          if (chunk.length > INSERT_CHUNK_BYTES) expect(pieces).toContain(chunk);
        }
        // Never two chunks that would have fitted in one.
        for (let i = 1; i < chunks.length; i += 1) {
          expect(chunks[i - 1].length + chunks[i].length).toBeGreaterThan(INSERT_CHUNK_BYTES);
        }
      }),
      { numRuns: 50 },
    );
  });
});
