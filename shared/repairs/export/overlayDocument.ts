// `repair.overlay.yaml`: the planned actions as an OpenAPI Overlay 1.0.0 document, each target a
// JSONPath (RFC 9535) of name selectors from the document root, so that it selects exactly the one
// node the plan edits.

import { stringify, parse } from 'yaml';
import { isPlainObject, resolveTokens } from '../../contracts/jsonPointer.js';
import { canonicalJson } from '../../fingerprint.js';
import type { PlannedAction } from './overlayPlan.js';

export const OVERLAY_VERSION = '1.0.0';

export function overlayYaml(document: Record<string, unknown>, title: string, actions: readonly PlannedAction[]): string {
  const overlay = {
    overlay: OVERLAY_VERSION,
    info: { title, version: '1.0.0' },
    actions: actions.map((action) => ({
      target: jsonPath(document, action.tokens),
      description: action.description,
      ...(action.remove ? { remove: true } : { update: action.update }),
    })),
  };
  // No folded lines (a target stays on one line) and no anchors (every action stands alone).
  const text = stringify(overlay, { lineWidth: 0, aliasDuplicateObjects: false });
  if (canonicalJson(parse(text)) !== canonicalJson(overlay)) throw new Error('the Overlay does not read back as written');
  return text;
}

/** `$['paths']['/pets']['get']…`; array members by index. */
export function jsonPath(document: Record<string, unknown>, tokens: readonly string[]): string {
  let path = '$';
  let node: unknown = document;
  for (const token of tokens) {
    path += Array.isArray(node) ? `[${token}]` : `[${nameSelector(token)}]`;
    node = isPlainObject(node) || Array.isArray(node) ? resolveTokens(node, [token]) : undefined;
  }
  return path;
}

/**
 * A quoted member name. RFC 9535 allows either quote; the one the name does not contain is used,
 * so that no escape is needed (some JSONPath libraries do not read escapes), and escapes only
 * where both quotes, a backslash or a control character occur.
 */
export function nameSelector(name: string): string {
  const plain = !/[\\\u0000-\u001f]/.test(name);
  if (plain && !name.includes("'")) return `'${name}'`;
  if (plain && !name.includes('"')) return `"${name}"`;
  const escaped = name.replace(/[\\'\u0000-\u001f]/g, (char) => {
    const named: Record<string, string> = { '\\': '\\\\', "'": "\\'", '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
    return named[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  return `'${escaped}'`;
}
