// What an export file must never contain (03 "Repair export bundle": `repair_export_sensitive_content`
// when a file would contain anything shaped like a credential or an e-mail address). Fixtures hold
// shapes, never values, but a shape names members as the vendor sent them, so a field called like
// an e-mail address or a key reaches the files through the patch, the schema and the findings.
// The patterns look at the text of each file as written; they err towards refusing.

/** One thing in a text that looks like a secret or a personal address; `start` is its offset. */
export interface SensitiveMatch {
  kind: SensitiveKind;
  start: number;
}

export type SensitiveKind =
  | 'email_address'
  | 'private_key'
  | 'known_key_prefix'
  | 'json_web_token'
  | 'authorization_header'
  | 'url_credentials'
  | 'uuid'
  | 'hex_token'
  | 'random_token';

// The service's own fingerprints (`sha256:` + 64 hex, 00-decisions §4) and the ids of its
// non-secret resources (a prefix and 26 characters of a ULID, shared/ids.ts) are expected in a
// bundle; they are blanked before the generic token rules run. Secret ids (`svc_ing_`, `svc_api_`)
// are not listed: they are credentials.
const FINGERPRINT = /sha256:[0-9a-f]{64}(?![0-9A-Za-z])/g;
const RESOURCE_ID =
  /(?<![0-9A-Za-z_.])(?:ws|acct|usr|env|wint|int|cv|cop|act|rule|credop|intop|consetup|ruleop|concopy|concomp|cliop|inc|fnd|rp|rds|rrun|rval|rapr|del|evt)_[0-9a-hjkmnp-tv-z]{26}(?![0-9A-Za-z_])/g;

const NOT_TOKEN = '(?<![A-Za-z0-9])';

/** Fixed-shape rules, in the order they are reported. */
const PATTERNS: readonly { kind: SensitiveKind; pattern: RegExp }[] = [
  // Local part and a dotted domain ending in a two-letter-or-longer label (RFC 5322's common form).
  { kind: 'email_address', pattern: /[A-Za-z0-9!#$%&'*+=?^_`{|}~-](?:[A-Za-z0-9!#$%&'*+=?^_`{|}~.-]*)@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}/ },
  { kind: 'private_key', pattern: /-----BEGIN[A-Z0-9 ]* PRIVATE KEY(?: BLOCK)?-----/ },
  {
    kind: 'known_key_prefix',
    pattern: new RegExp(
      `${NOT_TOKEN}(?:${[
        '(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}', // Stripe
        'gh[pousr]_[A-Za-z0-9]{20,}', // GitHub tokens
        'github_pat_[A-Za-z0-9_]{20,}',
        'xox[abposr]-[A-Za-z0-9-]{8,}', // Slack
        '(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}(?![0-9A-Z])', // AWS access key ids
        'AIza[0-9A-Za-z_-]{35}', // Google API keys
        'glpat-[A-Za-z0-9_-]{20,}', // GitLab
        'npm_[A-Za-z0-9]{36}',
        'SG\\.[A-Za-z0-9_-]{16,}\\.[A-Za-z0-9_-]{16,}', // SendGrid
        'svc_(?:ing|api)_[A-Za-z0-9_-]{16,}', // this service's ingest tokens and API keys
      ].join('|')})`,
    ),
  },
  // A JWS compact serialisation: two base64url JSON objects (`{"` encodes as `eyJ`) and a signature.
  { kind: 'json_web_token', pattern: /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/ },
  { kind: 'authorization_header', pattern: /\b(?:bearer|basic)\s+[A-Za-z0-9._~+/-]{12,}=*/i },
  { kind: 'url_credentials', pattern: /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]+@/ },
  // Many vendors issue UUIDs as API keys; a member named by one is an id, not a field, anyway.
  { kind: 'uuid', pattern: /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/ },
];

/** Runs of the characters random tokens are written in (base64, base64url, hex). */
const TOKEN_RUN = /[A-Za-z0-9_+/=-]+/g;
/** Below this length a run is a word or a short id, whatever its letters. */
const MIN_TOKEN = 24;
/** Hex runs this long with digits and letters are digests or keys. */
const MIN_HEX = 32;
/** One-case runs (base32, base36) this long with digits and high entropy are keys. */
const MIN_ONE_CASE = 32;

/** The first sensitive thing in `text`, or null. */
export function findSensitiveContent(text: string): SensitiveMatch | null {
  const blanked = text.replace(FINGERPRINT, blank).replace(RESOURCE_ID, blank);
  let first: SensitiveMatch | null = null;
  for (const { kind, pattern } of PATTERNS) {
    const match = pattern.exec(blanked);
    if (match && (first === null || match.index < first.start)) first = { kind, start: match.index };
  }
  for (const match of blanked.matchAll(TOKEN_RUN)) {
    if (first !== null && match.index >= first.start) break;
    const kind = tokenKind(match[0]);
    if (kind !== null) return { kind, start: match.index };
  }
  return first;
}

/**
 * Whether a run of token characters looks random. Names people write (camelCase, snake_case,
 * `ISO3166Alpha2`, JSON pointers of such names) are words of several letters; a random token
 * switches between lower case, upper case and digits every two characters or so. Hex and
 * one-case alphabets are judged by their entropy instead.
 */
export function tokenKind(run: string): SensitiveKind | null {
  const token = run.replace(/=+$/, '');
  if (token.length < MIN_TOKEN) return null;
  for (const hex of token.match(/[0-9a-f]{32,}|[0-9A-F]{32,}/g) ?? []) {
    if (hex.length >= MIN_HEX && /[0-9]/.test(hex) && /[a-fA-F]/.test(hex) && entropy(hex) >= 3) return 'hex_token';
  }
  // Words: a capital and lower-case letters, a run of capitals, a run of lower-case letters, digits.
  const words = token.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+/g) ?? [];
  const letters = words.reduce((sum, word) => sum + word.length, 0);
  if (letters >= MIN_TOKEN && letters / words.length < 3 && entropy(token) >= 3.5) return 'random_token';
  for (const part of token.split(/[_+/=-]+/)) {
    const oneCase = !/[a-z]/.test(part) || !/[A-Z]/.test(part);
    if (oneCase && part.length >= MIN_ONE_CASE && /[0-9]/.test(part) && /[A-Za-z]/.test(part) && entropy(part) >= 3.8) {
      return 'random_token';
    }
  }
  return null;
}

/** Shannon entropy of the characters of `text`, in bits per character. */
export function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

function blank(match: string): string {
  return ' '.repeat(match.length);
}
