// The path prefixes an OpenAPI 3.x `servers` array declares (docs/decisions/contracts.md "Server
// base paths"). `https://api.openai.com/v1` gives `/v1`; an observed `/v1/models` then matches
// the operation `/models`. Swagger 2.0 `basePath` arrives here as `servers` after conversion.

import { childPointer, isPlainObject } from './jsonPointer.js';
import { quote } from './operationKey.js';
import { compare } from './schemaSubset.js';
import type { SkippedPayload } from './types.js';

/** Distinct base paths kept per operation: the first ones by server order, defaults first. */
export const MAX_BASE_PATHS = 16;
/** Server URLs one server's variables may expand to; a product of enums beyond this is cut. */
export const MAX_SERVER_EXPANSIONS = 64;

// Relative server URLs (`/api/v3`, `v1`) are paths: resolved against a root that is never used.
const RELATIVE_ROOT = 'http://relative.invalid/';
const VARIABLE = /\{([^{}]*)\}/g;

export interface ServerBasePaths {
  /** Sorted, distinct; each starts with `/` and has no trailing `/`. Empty: every server is at the root. */
  basePaths: string[];
  skipped: SkippedPayload[];
}

/**
 * The base paths of the servers declared at `pointer` (a `servers` member), or null when that
 * level declares none (absent or empty array: the next level up applies, as in OpenAPI).
 */
export function serverBasePaths(servers: unknown, pointer: string): ServerBasePaths | null {
  if (servers === undefined || (Array.isArray(servers) && servers.length === 0)) return null;
  const skipped: SkippedPayload[] = [];
  if (!Array.isArray(servers)) {
    skipped.push({ pointer, reason: 'invalid servers (not an array)' });
    return { basePaths: [], skipped };
  }
  const found = new Set<string>();
  let cut = false;
  for (const [index, server] of servers.entries()) {
    const serverPointer = childPointer(pointer, index);
    const expanded = expandServer(server, serverPointer);
    if ('skipped' in expanded) {
      skipped.push(expanded.skipped);
      continue;
    }
    if (expanded.cut)
      skipped.push({
        pointer: serverPointer,
        reason: `server variables expand to more than ${MAX_SERVER_EXPANSIONS} URLs; the first ${MAX_SERVER_EXPANSIONS} were used`,
      });
    for (const url of expanded.urls) {
      const path = basePathOf(url);
      if (path === null) {
        skipped.push({ pointer: childPointer(serverPointer, 'url'), reason: `invalid server URL ${quote(url)}` });
        continue;
      }
      if (path === '' || found.has(path)) continue;
      if (found.size === MAX_BASE_PATHS) {
        cut = true;
        continue;
      }
      found.add(path);
    }
  }
  if (cut)
    skipped.push({ pointer, reason: `servers declare more than ${MAX_BASE_PATHS} base paths; the first ${MAX_BASE_PATHS} were kept` });
  return { basePaths: [...found].sort(compare), skipped };
}

type Expansion = { urls: string[]; cut: boolean } | { skipped: SkippedPayload };

/** The server's URL with each `{name}` replaced by the variable's default, then its enum values. */
function expandServer(server: unknown, pointer: string): Expansion {
  if (!isPlainObject(server)) return { skipped: { pointer, reason: 'invalid server (not an object)' } };
  const url = Object.hasOwn(server, 'url') ? server.url : undefined;
  if (typeof url !== 'string') return { skipped: { pointer, reason: 'invalid server (url is not a string)' } };
  const variables = Object.hasOwn(server, 'variables') && isPlainObject(server.variables) ? server.variables : {};
  let urls = [''];
  let cut = false;
  let last = 0;
  for (const match of url.matchAll(VARIABLE)) {
    const name = match[1];
    const values = variableValues(Object.hasOwn(variables, name) ? variables[name] : undefined);
    if (values.length === 0) {
      return { skipped: { pointer: childPointer(pointer, 'url'), reason: `server variable ${quote(name)} has no default or enum value` } };
    }
    const literal = url.slice(last, match.index);
    last = match.index + match[0].length;
    const next: string[] = [];
    outer: for (const prefix of urls) {
      for (const value of values) {
        if (next.length === MAX_SERVER_EXPANSIONS) {
          cut = true;
          break outer;
        }
        next.push(prefix + literal + value);
      }
    }
    urls = next;
  }
  const tail = url.slice(last);
  return { urls: urls.map((prefix) => prefix + tail), cut };
}

function variableValues(variable: unknown): string[] {
  if (!isPlainObject(variable)) return [];
  const values: string[] = [];
  if (typeof variable.default === 'string') values.push(variable.default);
  if (Array.isArray(variable.enum)) {
    for (const value of variable.enum) if (typeof value === 'string' && !values.includes(value)) values.push(value);
  }
  return values;
}

/** The URL's path without trailing `/` (`''` for the root), or null when it is not a URL. */
export function basePathOf(url: string): string | null {
  // A leftover brace is an unterminated variable; WHATWG URL would percent-encode it into a path.
  if (/[{}]/.test(url)) return null;
  let pathname: string;
  try {
    pathname = new URL(url, RELATIVE_ROOT).pathname;
  } catch {
    return null;
  }
  // A non-special scheme (`mailto:x`) has an opaque path, not a server path.
  if (!pathname.startsWith('/')) return null;
  return pathname.replace(/\/+$/, '');
}
