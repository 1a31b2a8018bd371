import { describe, expect, it } from 'vitest';
import { ADMISSION_DEADLINE_MIN_MS, RECEIPT_TO_ADMISSION_MAX_MS } from '../shared/admissionTiming.js';
import { ConfigError, loadConfig } from '../shared/config.js';

// shared/admissionTiming.ts: a batch is in no set the analyzer reads until its admission, at most
// RECEIPT_TO_ADMISSION_MAX_MS after its receipt stamp, so the analyzer's stream time must stay at
// least that far behind the service clock: ANALYZER_RULE_GRACE_MS may not be lower.

// A key given, so that loading the configuration writes no key file.
const env = (extra: Record<string, string> = {}) => ({ SECRET_ENCRYPTION_KEY: 'ab'.repeat(32), ...extra });

describe('ANALYZER_RULE_GRACE_MS and RECEIPT_TO_ADMISSION_MAX_MS', () => {
  it('refuses a grace below the longest receipt-to-admission time, naming the variable', () => {
    const load = () => loadConfig(env({ ANALYZER_RULE_GRACE_MS: String(RECEIPT_TO_ADMISSION_MAX_MS - 1) }));
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/ANALYZER_RULE_GRACE_MS/);
  });

  it('accepts a grace equal to it', () => {
    expect(loadConfig(env({ ANALYZER_RULE_GRACE_MS: String(RECEIPT_TO_ADMISSION_MAX_MS) })).analyzer.ruleGraceMs).toBe(
      RECEIPT_TO_ADMISSION_MAX_MS,
    );
  });

  it('defaults to a grace at least as long', () => {
    expect(loadConfig(env()).analyzer.ruleGraceMs).toBeGreaterThanOrEqual(RECEIPT_TO_ADMISSION_MAX_MS);
  });
});

describe('INGEST_ADMISSION_DEADLINE_MS and RECEIPT_TO_ADMISSION_MAX_MS', () => {
  it('refuses a deadline that leaves a batch admitted at the latest no time to become durable', () => {
    expect(ADMISSION_DEADLINE_MIN_MS).toBeGreaterThan(RECEIPT_TO_ADMISSION_MAX_MS);
    const load = () => loadConfig(env({ INGEST_ADMISSION_DEADLINE_MS: String(ADMISSION_DEADLINE_MIN_MS - 1) }));
    expect(load).toThrow(/INGEST_ADMISSION_DEADLINE_MS/);
    expect(loadConfig(env({ INGEST_ADMISSION_DEADLINE_MS: String(ADMISSION_DEADLINE_MIN_MS) })).ingest.admissionDeadlineMs).toBe(
      ADMISSION_DEADLINE_MIN_MS,
    );
    expect(loadConfig(env()).ingest.admissionDeadlineMs).toBeGreaterThanOrEqual(ADMISSION_DEADLINE_MIN_MS);
  });
});
