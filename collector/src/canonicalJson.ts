// RFC 8785 (JCS) canonical JSON, for the values the collector fingerprints (schema shapes):
// object members sorted by UTF-16 code units, no whitespace, strings and numbers written as
// ECMAScript's JSON.stringify writes them (which is what RFC 8785 specifies).

import { byCodeUnits } from './shape.js';

export function canonicalJson(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('a non-finite number has no JSON form');
      return JSON.stringify(value);
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(',')}]`;
      const record = value as Record<string, unknown>;
      let out = '{';
      let first = true;
      for (const name of Object.keys(record).sort(byCodeUnits)) {
        const member = record[name];
        if (member === undefined) continue;
        out += `${first ? '' : ','}${JSON.stringify(name)}:${canonicalJson(member)}`;
        first = false;
      }
      return `${out}}`;
    }
    default:
      throw new TypeError(`a ${typeof value} has no JSON form`);
  }
}
