// Route templates learned from the connection check: the active contract version's distinct
// `{method, routeTemplate}` with their base paths (the path prefixes of the vendor's servers).
// Compiled once per version into segment tries, so that templatising an observed path costs a
// walk of the path's segments, whatever the number of routes.

/** What the edge's connection check answers about the active contract (ingest/contract/activeRoutes.ts). */
export interface LearnedContract {
  versionId: string;
  /** Matches a concrete path (no query) of a call with this verb; undefined when no route does. Never throws. */
  match(method: string, path: string): string | undefined;
  /** How many routes were compiled. */
  size: number;
}

interface TrieNode {
  literals: Map<string, TrieNode>;
  parameter?: TrieNode;
  /** A template ending here, and the base paths it may be called under. */
  end?: { template: string; basePaths: Set<string> };
}

const newNode = (): TrieNode => ({ literals: new Map() });

/** Accepted as given: an absolute path of printable ASCII without query or fragment, at most 256 characters. */
const TEMPLATE = /^\/[\x21-\x7E]{0,255}$/;
const BASE_PATH = /^(\/[\x21-\x7E]+)+$/;
const PARAMETER = /^\{[^{}/]+\}$/;

const segmentsOf = (path: string): string[] => path.replace(/\/+$/, '').split('/').slice(1);

function insert(root: TrieNode, template: string, basePaths: readonly string[]): void {
  let node = root;
  for (const segment of segmentsOf(template)) {
    if (PARAMETER.test(segment)) node = node.parameter ??= newNode();
    else {
      let next = node.literals.get(segment);
      if (!next) {
        next = newNode();
        node.literals.set(segment, next);
      }
      node = next;
    }
  }
  node.end ??= { template, basePaths: new Set() };
  for (const basePath of basePaths) node.end.basePaths.add(basePath);
}

interface Found {
  template: string;
  literals: number;
}

/**
 * The template matching `segments` from `index` with the most literal segments (a parameter takes
 * exactly one non-empty segment), whose base paths include `basePath` when one was cut off. Each
 * trie node is visited at most once per path: the cost is bounded by the trie, not exponential.
 */
function walk(
  node: TrieNode,
  segments: readonly string[],
  index: number,
  literals: number,
  basePath: string | undefined,
  best: Found | undefined,
): Found | undefined {
  if (index === segments.length) {
    const end = node.end;
    if (!end || (basePath !== undefined && !end.basePaths.has(basePath))) return best;
    return best === undefined || literals > best.literals ? { template: end.template, literals } : best;
  }
  const segment = segments[index];
  const literal = node.literals.get(segment);
  if (literal) best = walk(literal, segments, index + 1, literals + 1, basePath, best);
  if (node.parameter && segment !== '') best = walk(node.parameter, segments, index + 1, literals, basePath, best);
  return best;
}

/** The best template for a path in one trie: as is, or with one of the known base paths cut off. */
function find(root: TrieNode, path: string, basePaths: readonly string[]): Found | undefined {
  let best = walk(root, segmentsOf(path), 0, 0, undefined, undefined);
  for (const basePath of basePaths) {
    if (path !== basePath && !path.startsWith(`${basePath}/`)) continue;
    const rest = path.slice(basePath.length) || '/';
    const found = walk(root, segmentsOf(rest), 0, 0, basePath, undefined);
    // The prefix's segments were matched literally too; a tie keeps the path as is.
    if (found) {
      const literals = found.literals + segmentsOf(basePath).length;
      if (best === undefined || literals > best.literals) best = { template: found.template, literals };
    }
  }
  return best;
}

/**
 * Compiles the connection check's `activeContractVersionId` and `routes`; undefined when the
 * answer names no active version. Entries that are not well-formed are skipped.
 */
export function learnedContract(body: unknown): LearnedContract | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { activeContractVersionId: versionId, routes } = body as { activeContractVersionId?: unknown; routes?: unknown };
  if (typeof versionId !== 'string' || versionId === '') return undefined;
  const byMethod = new Map<string, TrieNode>();
  const any = newNode();
  const basePaths = new Set<string>();
  let size = 0;
  for (const route of Array.isArray(routes) ? routes : []) {
    const { method, routeTemplate, basePaths: given } = (route ?? {}) as { method?: unknown; routeTemplate?: unknown; basePaths?: unknown };
    if (typeof method !== 'string' || typeof routeTemplate !== 'string' || !TEMPLATE.test(routeTemplate) || /[?#]/.test(routeTemplate))
      continue;
    const prefixes = (Array.isArray(given) ? given : []).filter(
      (entry): entry is string => typeof entry === 'string' && BASE_PATH.test(entry),
    );
    for (const prefix of prefixes) basePaths.add(prefix);
    const upper = method.toUpperCase();
    let trie = byMethod.get(upper);
    if (!trie) {
      trie = newNode();
      byMethod.set(upper, trie);
    }
    insert(trie, routeTemplate, prefixes);
    insert(any, routeTemplate, prefixes);
    size += 1;
  }
  const prefixes = [...basePaths];
  return {
    versionId,
    size,
    match(method, path) {
      try {
        // The call's own verb first (GET /models/{model} rather than DELETE /models/special), then any.
        const own = byMethod.get(method);
        return (own && find(own, path, prefixes)?.template) ?? find(any, path, prefixes)?.template;
      } catch {
        return undefined;
      }
    },
  };
}
