/** A Buffer over the same bytes (a Uint8Array arrives from a worker thread). */
export const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * True when the bytes cover all of their own memory, so moving that memory to another thread
 * (a transfer list) moves nothing else with it.
 */
export const ownsMemory = (bytes: Uint8Array): boolean =>
  bytes instanceof Uint8Array
  && bytes.byteOffset === 0
  && bytes.byteLength === bytes.buffer.byteLength
  && bytes.buffer instanceof ArrayBuffer;
