// Route templates of observed HTTP calls (03 transport rule 2: a bounded, low-cardinality absolute
// path, never a query string, never ids, run ids, timestamps or customer ids).

/** HTTP verbs an envelope may carry (03 transport; other verbs are not observed). */
const METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/** The upper-cased verb when an envelope can carry it, else undefined (the call is not observed). */
export function transportMethod(method: unknown): string | undefined {
  if (typeof method !== 'string') return undefined;
  const upper = method.toUpperCase();
  return METHODS.has(upper) ? upper : undefined;
}

/** Derived templates are cut to this length: the default eventType of a webhook is its route (at most 128 characters). */
export const MAX_DERIVED_ROUTE = 128;
/** A route given by the host (option or framework) longer than this, or not printable ASCII, is not used. */
const MAX_ROUTE = 256;
const PRINTABLE = /^[\x21-\x7E]+$/;

/** A route template the envelope accepts: an absolute path of printable ASCII without query or fragment. */
export function acceptableRoute(route: unknown): route is string {
  return (
    typeof route === 'string'
    && route.length <= MAX_ROUTE
    && route.startsWith('/')
    && PRINTABLE.test(route)
    && !route.includes('?')
    && !route.includes('#')
  );
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const HEX_ID = /^[0-9a-f]{16,}$/i;
/** Numbers, and number-like runs (dates, times, versions of releases): digits joined by separators. */
const NUMERIC = /^[+-]?\d[\d\-_.:,+]*$/;
const DATE_LIKE = /\d{4}-\d{2}-\d{2}/;
const DIGIT = /\d/g;
const PREFIXED_ID = /^[A-Za-z]{1,12}[-_](?![vV]\d+$)(?=[A-Za-z0-9]*\d)[A-Za-z0-9]+$/;

/**
 * Whether one path segment looks like an id, a timestamp or an opaque token rather than a word of
 * the API: a number, a UUID, a hex run of 16 or more, a date, an e-mail-like value, a prefixed id
 * (`ord_1`, `item-42`: a word, `-` or `_`, then letters and digits with a digit), a segment of
 * 16 or more characters holding a digit (prefixed ids such as `cus_NffrFeUfNV2Hib`, ULIDs, base64
 * tokens), one holding four or more digits (`INV-2024-0001`), or one of 32 or more characters.
 */
export function idLikeSegment(segment: string): boolean {
  if (segment === '') return false;
  let decoded = segment;
  if (segment.includes('%')) {
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return true;
    }
  }
  if (NUMERIC.test(decoded) || UUID.test(decoded) || HEX_ID.test(decoded) || DATE_LIKE.test(decoded)) return true;
  if (decoded.includes('@')) return true;
  // A short word, a separator and a run holding a digit: prefixed ids (`ord_1`, `cus_9f3k`, `item-42`).
  if (PREFIXED_ID.test(decoded)) return true;
  if (decoded.length >= 32) return true;
  const digits = decoded.match(DIGIT)?.length ?? 0;
  if (digits >= 4) return true;
  if (decoded.length >= 16 && digits > 0) return true;
  // A segment of 16 or more characters mixing cases with no separator is a token, not a word.
  if (decoded.length >= 16 && /[a-z]/.test(decoded) && /[A-Z]/.test(decoded) && !/[-_.]/.test(decoded)) return true;
  return false;
}

/**
 * The path of a URL (never its query or fragment) with every id-like segment replaced by `{id}`,
 * bounded to MAX_DERIVED_ROUTE characters (whole segments; what is cut becomes `/{rest}`).
 */
export function strippedPath(pathOrUrl: string): string {
  let path = pathOrUrl;
  const cut = path.search(/[?#]/);
  if (cut !== -1) path = path.slice(0, cut);
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname;
    } catch {
      path = `/${path}`;
    }
  }
  const segments = path.split('/').map((segment) => (idLikeSegment(segment) ? '{id}' : encodeSegment(segment)));
  let out = segments.join('/');
  if (out.length > MAX_DERIVED_ROUTE) {
    out = '';
    for (let i = 1; i < segments.length; i += 1) {
      const next = `${out}/${segments[i]}`;
      if (next.length > MAX_DERIVED_ROUTE - '/{rest}'.length) break;
      out = next;
    }
    out += '/{rest}';
  }
  return out === '' ? '/' : out;
}

/** A segment as printable ASCII (a path from a framework may hold raw spaces or non-ASCII). */
function encodeSegment(segment: string): string {
  return PRINTABLE.test(segment) || segment === '' ? segment : segment.replace(/[^\x21-\x7E]/g, (char) => encodeURIComponent(char));
}

interface CompiledTemplate {
  template: string;
  /** One entry per segment: the literal, or null for a parameter. */
  segments: (string | null)[];
  literals: number;
}

const PARAMETER = /^(\{[^{}/]+\}|:[A-Za-z_][\w-]*)$/;

function compileTemplate(template: string): CompiledTemplate | undefined {
  if (!acceptableRoute(template)) return undefined;
  const segments = template
    .replace(/\/+$/, '')
    .split('/')
    .slice(1)
    .map((segment) => (PARAMETER.test(segment) ? null : segment));
  return { template, segments, literals: segments.filter((segment) => segment !== null).length };
}

/**
 * Matches paths against templates such as `/v1/orders/{id}` (or `/v1/orders/:id`): literal
 * segments must be equal, a parameter takes exactly one non-empty segment. When several match,
 * the one with the most literal segments wins (then the first given).
 */
export function routeMatcher(templates: readonly string[] | undefined): (path: string) => string | undefined {
  const compiled = (templates ?? []).map(compileTemplate).filter((entry): entry is CompiledTemplate => entry !== undefined);
  if (compiled.length === 0) return () => undefined;
  return (path) => {
    const segments = path.replace(/\/+$/, '').split('/').slice(1);
    let best: CompiledTemplate | undefined;
    for (const candidate of compiled) {
      if (candidate.segments.length !== segments.length) continue;
      let matches = true;
      for (let i = 0; i < segments.length && matches; i += 1) {
        const literal = candidate.segments[i];
        matches = literal === null ? segments[i] !== '' : literal === segments[i];
      }
      if (matches && (best === undefined || candidate.literals > best.literals)) best = candidate;
    }
    return best?.template;
  };
}

export interface RouteOptions {
  /**
   * Route templates such as `/v1/orders/{id}` matched against the path: they override the
   * templates learned from the active contract.
   */
  routes?: string[];
  /**
   * Returns the route template of a call, or undefined to fall back to `routes`, then the learned
   * templates, then the id-stripped path. Overrides all of them.
   */
  routeTemplate?: (url: string, method: string) => string | undefined;
}

/** The learned template of a concrete path (the collector's `learnedRoute`), never throwing. */
export type LearnedRoute = (method: string, path: string) => string | undefined;

/** The collector's learned templates, as a function that never throws. */
export function learnedRouteOf(collector: { learnedRoute?: LearnedRoute }): LearnedRoute {
  return (method, path) => {
    try {
      const found = collector.learnedRoute?.(method, path);
      return acceptableRoute(found) ? found : undefined;
    } catch {
      return undefined;
    }
  };
}

/**
 * The route template of a call: the host's callback, then the first matching template of
 * `routes`, then the active contract's template (`learned`), then the path with ids replaced by
 * `{id}`. A callback that throws or returns something that is not an absolute path without a
 * query string is ignored.
 */
export function routeResolver(options: RouteOptions, learned?: LearnedRoute): (url: string, path: string, method: string) => string {
  const match = routeMatcher(options.routes);
  const callback = options.routeTemplate;
  return (url, path, method) => {
    if (callback) {
      try {
        const given = callback(url, method);
        if (acceptableRoute(given)) return given;
      } catch {
        // The host's callback failed: fall back below.
      }
    }
    return match(path) ?? learned?.(method, path) ?? strippedPath(path);
  };
}
