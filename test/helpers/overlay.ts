import jsonpath from 'jsonpath';
import { applyOverlay as applyWithLibrary } from 'openapi-overlays-js/src/overlay.js';
import { parse } from 'yaml';

/**
 * Applies an exported `repair.overlay.yaml` to a document with an implementation independent of
 * the service's: openapi-overlays-js (JSONPath by `jsonpath`, recursive merge appending arrays).
 * That library reports a failed update on stderr and goes on, so every action's target is first
 * required to select exactly one node: an Overlay that misses its place fails here, loudly.
 */
export async function applyOverlay(document: unknown, overlayYaml: string): Promise<Record<string, unknown>> {
  const overlay = parse(overlayYaml) as { overlay?: unknown; actions?: { target: string; update?: unknown; remove?: boolean }[] };
  if (overlay.overlay !== '1.0.0' || !Array.isArray(overlay.actions) || overlay.actions.length === 0) {
    throw new Error('not an Overlay 1.0.0 document with actions');
  }
  let current: unknown = structuredClone(document);
  for (const action of overlay.actions) {
    const selected = jsonpath.paths(current, action.target);
    if (selected.length !== 1) throw new Error(`the target ${action.target} selects ${selected.length} nodes`);
    current = applyWithLibrary(current, { overlay: overlay.overlay, actions: [action] });
  }
  return current as Record<string, unknown>;
}
