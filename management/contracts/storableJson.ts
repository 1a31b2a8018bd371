import { childPointer } from '../../shared/contracts/jsonPointer.js';
import { isStorableText } from '../../shared/db/storableText.js';

/** Deeper nesting than any real contract; beyond it canonicalisation and storage would not be safe. */
export const MAX_DOCUMENT_DEPTH = 256;

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
      if (!isStorableText(item.value)) return { pointer: item.pointer, reason: 'a string holds U+0000 or a lone surrogate' };
      continue;
    }
    if (typeof item.value !== 'object' || item.value === null) continue;
    if (item.depth >= MAX_DOCUMENT_DEPTH) return { pointer: item.pointer, reason: `nesting deeper than ${MAX_DOCUMENT_DEPTH} levels` };
    if (Array.isArray(item.value)) {
      for (const [index, child] of item.value.entries())
        stack.push({ value: child, pointer: childPointer(item.pointer, index), depth: item.depth + 1 });
      continue;
    }
    for (const [key, child] of Object.entries(item.value)) {
      const pointer = childPointer(item.pointer, key);
      if (!isStorableText(key)) return { pointer, reason: 'a member name holds U+0000 or a lone surrogate' };
      stack.push({ value: child, pointer, depth: item.depth + 1 });
    }
  }
  return null;
}
