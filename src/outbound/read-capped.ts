/**
 * Reads an outbound answer's body up to a stated number of bytes, chunk by chunk, and cancels the
 * rest: a huge or endless answer costs at most `maxBytes` (plus one chunk) of memory, never its
 * whole size. Used for every answer the Worker fetches (engines, token endpoint, origin robots.txt).
 */
export interface Capped {
  /** The bytes read, decoded as UTF-8 (at most `maxBytes` of them). */
  text: string;
  /** The body had more than `maxBytes` bytes; `text` holds only the first ones. */
  overCap: boolean;
}

export async function readCapped(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Capped> {
  if (body === null) return { text: "", overCap: false };
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text: text + decoder.decode(), overCap: false };
      const room = maxBytes - bytes;
      if (value.byteLength > room) {
        text += decoder.decode(value.subarray(0, room));
        return { text, overCap: true };
      }
      bytes += value.byteLength;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    // Abandons what is left of the body (a no-op once it ended).
    reader.cancel().catch(() => {});
  }
}
