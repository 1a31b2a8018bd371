import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { sqlIdentifier, sqlLiteral } from '../shared/clickhouse/escape.js';
import { loadConfig, ConfigError } from '../shared/config.js';
import { AppError, ERROR_CATALOGUE } from '../shared/errors/index.js';
import { canonicalJson, fingerprint, FINGERPRINT_PATTERN } from '../shared/fingerprint.js';
import { hasIdForm, newId } from '../shared/ids.js';
import { constantTimeEqual, decryptSecret, encryptSecret, newSecret } from '../shared/secrets.js';
import { createClickHouse } from '../shared/clickhouse/client.js';

describe('newId', () => {
  it('is a prefix plus 26 time-ordered characters', () => {
    const ids = Array.from({ length: 200 }, () => newId('wint_'));
    for (const id of ids) expect(hasIdForm(id, 'wint_')).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(hasIdForm(ids[0], 'int_')).toBe(false);
    expect(hasIdForm(`wint_${'u'.repeat(26)}`, 'wint_')).toBe(false);
  });
  it('gives public keys fresh randomness, not the next value of a neighbouring id', () => {
    const a = newId('svc_int_').slice(-16);
    const b = newId('svc_int_').slice(-16);
    const sharedPrefix = [...a].findIndex((ch, i) => ch !== b[i]);
    expect(sharedPrefix).toBeLessThan(12);
  });
});

describe('fingerprint', () => {
  it('is sha256 over JCS, independent of key order', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'] })).toBe('{"a":[true,null,"x"],"b":1}');
    const a = fingerprint({ b: 1, a: { d: 2, c: 3 } });
    expect(a).toMatch(FINGERPRINT_PATTERN);
    expect(fingerprint({ a: { c: 3, d: 2 }, b: 1 })).toBe(a);
    expect(fingerprint({ a: { c: 3, d: 2 }, b: 2 })).not.toBe(a);
  });
  it('matches RFC 8785 number serialisation', () => {
    expect(canonicalJson([1e21, 0.000001, -0, 1.5])).toBe('[1e+21,0.000001,0,1.5]');
  });
});

describe('secrets', () => {
  const key = Buffer.alloc(32, 7);
  it('round-trips AES-256-GCM and detects tampering', () => {
    const token = newSecret('svc_ing_');
    const sealed = encryptSecret(token, key);
    expect(sealed).not.toContain(token);
    expect(decryptSecret(sealed, key)).toBe(token);
    const parts = sealed.split('.');
    // Flip a bit of the first ciphertext byte (writing a fixed byte left it unchanged once in 256 runs).
    const body = Buffer.from(parts[3], 'base64url');
    body[0] ^= 1;
    parts[3] = body.toString('base64url');
    expect(() => decryptSecret(parts.join('.'), key)).toThrow();
    expect(() => decryptSecret(sealed, Buffer.alloc(32, 8))).toThrow();
  });
  it('compares in constant time, including different lengths', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
  });
});

describe('config', () => {
  const base = { DATA_DIR: '.data' };
  it('defaults to the loopback stack and spec limits', () => {
    const config = loadConfig(base);
    expect(config.management.port).toBe(8081);
    expect(config.ingest.port).toBe(8080);
    expect(config.analyzer.port).toBe(8082);
    expect(config.limits.sandboxMonthlyAllowance).toBe(10000);
    expect(config.limits.integrationRequestsPerMin).toBe(600);
    expect(config.enableTestClock).toBe(false);
    expect(config.secretEncryptionKey.length).toBe(32);
  });
  it('fails fast on bad values, naming the variable', () => {
    expect(() => loadConfig({ ...base, MANAGEMENT_PORT: 'eighty' })).toThrow(/MANAGEMENT_PORT/);
    expect(() => loadConfig({ ...base, DATABASE_URL: 'mysql://x' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, ENABLE_TEST_CLOCK: 'maybe' })).toThrow(/ENABLE_TEST_CLOCK/);
    expect(() => loadConfig({ ...base, SECRET_ENCRYPTION_KEY: 'abcd' })).toThrow(/SECRET_ENCRYPTION_KEY/);
  });
});

describe('error catalogue', () => {
  it('gives every code a 4xx/5xx status and builds bodies with only the listed extras', () => {
    for (const [code, spec] of Object.entries(ERROR_CATALOGUE)) {
      expect(spec.status, code).toBeGreaterThanOrEqual(400);
      expect(spec.status, code).toBeLessThan(600);
    }
    const error = new AppError('active_contract_changed', { extra: { activeContractVersionId: 'cv_1', secret: 'x' } });
    expect(error.status).toBe(409);
    expect(error.body()).toEqual({ error: 'active_contract_changed', activeContractVersionId: 'cv_1' });
    expect(new AppError('mode_cutover_write_paused').retryAfterSeconds).toBe(1);
    expect(new AppError('integration_scope_mismatch', { status: 403 }).status).toBe(403);
  });
});

describe('ClickHouse sqlLiteral', () => {
  it('escapes quotes, backslashes and control characters', () => {
    expect(sqlLiteral("it's")).toBe("'it\\'s'");
    expect(sqlLiteral('a\\b')).toBe("'a\\\\b'");
    expect(sqlLiteral('line\nnext\t\0')).toBe("'line\\nnext\\t\\0'");
    expect(sqlLiteral(42)).toBe('42');
    expect(sqlLiteral(null)).toBe('NULL');
    expect(() => sqlLiteral(Number.NaN)).toThrow();
    expect(() => sqlIdentifier('x; DROP TABLE y')).toThrow();
  });

  it('round-trips arbitrary strings through the real ClickHouse server', async () => {
    const client = createClickHouse(process.env.CLICKHOUSE_URL!, process.env.CLICKHOUSE_DATABASE!);
    try {
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 40 }), async (value) => {
          const result = await client.query({ query: `SELECT ${sqlLiteral(value)} AS v`, format: 'JSONEachRow' });
          const [row] = await result.json<{ v: string }>();
          expect(row.v).toBe(value);
        }),
        { numRuns: 60 },
      );
    } finally {
      await client.close();
    }
  });
});
