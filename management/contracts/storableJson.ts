import { childPointer } from '../../shared/contracts/jsonPointer.js';

/** Deeper nesting than any real contract; beyond it canonicalisation and storage would not be safe. */
export const MAX_DOCUMENT_DEPTH = 256;

// U+0000 cannot be stored in PostgreSQL `jsonb`, and a lone surrogate has no UTF-8 form, so the
// stored evidence would differ from the fingerprinted document.
const UNSTORABLE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export interface UnstorableJson {
  pointer: string;
  reason: string;
}

/**
 * Finds the first place where a request value cannot be kept as immutable evidence exactly as it
 * was fingerprinted: nesting deeper than {@link MAX_DOCUMENT_DEPTH}, or a member name or string
 * holding U+0000 or a lone surrogate. Iterative, so a hostile document cannot exhaust the stack.
 */
export function findUnstorableJson(value: unknown, root = ''): UnstorableJson | null {
  const stack: { value: unknown; pointer: string; depth: number }[] = [{ value, pointer: root, depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop() as { value: unknown; pointer: string; depth: number };
    if (typeof item.value === 'string') {
      if (UNSTORABLE_TEXT.test(item.value)) return { pointer: item.pointer, reason: 'a string holds U+0000 or a lone surrogate' };
      continue;
    }
    if (typeof item.value !== 'object' || item.value === null) continue;
    if (item.depth >= MAX_DOCUMENT_DEPTH) return { pointer: item.pointer, reason: `nesting deeper than ${MAX_DOCUMENT_DEPTH} levels` };
    if (Array.isArray(item.value)) {
      item.value.forEach((child, index) => stack.push({ value: child, pointer: childPointer(item.pointer, index), depth: item.depth + 1 }));
      continue;
    }
    for (const [key, child] of Object.entries(item.value)) {
      const pointer = childPointer(item.pointer, key);
      if (UNSTORABLE_TEXT.test(key)) return { pointer, reason: 'a member name holds U+0000 or a lone surrogate' };
      stack.push({ value: child, pointer, depth: item.depth + 1 });
    }
  }
  return null;
}
