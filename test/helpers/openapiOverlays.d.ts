// Types of the two untyped modules the Overlay helper uses (test/helpers/overlay.ts).

declare module 'openapi-overlays-js/src/overlay.js' {
  /** Applies an Overlay document (parsed) to a document, in place for every target but `$`; returns the result. */
  export function applyOverlay(definition: unknown, overlay: unknown): unknown;
}

declare module 'jsonpath' {
  const jsonpath: { paths(document: unknown, expression: string): (string | number)[][] };
  export default jsonpath;
}
