// RFC 6901 JSON pointers: the locations that `skipped` entries and `invalid_contract` errors
// report, and the local `$ref` targets the importers resolve.

export function escapeToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function unescapeToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The pointer of a child member: `childPointer('/paths', '/pets')` is `/paths/~1pets`. */
export function childPointer(parent: string, token: string | number): string {
  return `${parent}/${escapeToken(String(token))}`;
}

export function pointerOf(tokens: readonly string[]): string {
  return tokens.map((token) => `/${escapeToken(token)}`).join('');
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Own members only, so a document key such as `__proto__` or `constructor` is plain data. */
export function ownMember(value: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(value, key) ? value[key] : undefined;
}

/** Assigns a member whose name comes from a document (safe for `__proto__`). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

export type ParsedReference =
  | { kind: 'local'; tokens: string[]; pointer: string }
  | { kind: 'remote' }
  | { kind: 'anchor' }
  | { kind: 'invalid' };

/**
 * Classifies a `$ref` value. Only same-document JSON-pointer fragments (`#`, `#/…`) are local;
 * the fragment is percent-decoded, then split into unescaped tokens. `pointer` is the
 * canonical (re-escaped, decoded) form, so `#/a%20b` and `#/a b` name the same target.
 */
export function parseReference(ref: string): ParsedReference {
  if (!ref.startsWith('#')) return { kind: 'remote' };
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(1));
  } catch {
    return { kind: 'invalid' };
  }
  if (fragment === '') return { kind: 'local', tokens: [], pointer: '' };
  if (!fragment.startsWith('/')) return { kind: 'anchor' };
  const tokens = fragment.slice(1).split('/').map(unescapeToken);
  return { kind: 'local', tokens, pointer: pointerOf(tokens) };
}

/** Walks `tokens` from `root`; `undefined` when a step is missing (own members only). */
export function resolveTokens(root: unknown, tokens: readonly string[]): unknown {
  let node: unknown = root;
  for (const token of tokens) {
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      const index = Number(token);
      if (index >= node.length) return undefined;
      node = node[index];
    } else if (isPlainObject(node)) {
      if (!Object.hasOwn(node, token)) return undefined;
      node = node[token];
    } else {
      return undefined;
    }
  }
  return node;
}

/**
 * A `$ref` value naming a pointer in the stored schema (`#/$defs/Pet`): each escaped token is
 * percent-encoded where RFC 3986 does not allow the character in a fragment.
 */
export function fragmentRef(tokens: readonly string[]): string {
  return `#${tokens.map((token) => `/${escapeToken(token).replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@]+/g, encodeURIComponent)}`).join('')}`;
}
