/**
 * Reads the first bytes of an outbound answer's body, chunk by chunk, and cancels the rest: an
 * answer of any size costs at most `maxBytes` plus one chunk of memory and download, never its
 * whole size. Every answer the Worker fetches is read through this (read-capped.ts for text).
 */
import { concatBytes } from "../core/bytes.ts";

export interface Prefix {
  /** At most `maxBytes` bytes: the whole body, or its start when `overCap`. */
  bytes: Uint8Array;
  /** The body had more than `maxBytes` bytes. */
  overCap: boolean;
}

export async function readPrefix(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Prefix> {
  if (body === null) return { bytes: new Uint8Array(0), overCap: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: concatBytes(chunks, size), overCap: false };
      const room = maxBytes - size;
      if (value.byteLength > room) {
        chunks.push(value.subarray(0, room));
        return { bytes: concatBytes(chunks, maxBytes), overCap: true };
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    // Abandons what is left of the body (a no-op once it ended).
    reader.cancel().catch(() => {});
  }
}
