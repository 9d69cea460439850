/** An outbound answer's body as text, read only up to a stated number of bytes (read-prefix.ts). */
import { readPrefix } from "./read-prefix.ts";

export interface Capped {
  /** The bytes read, decoded as UTF-8 (at most `maxBytes` of them). */
  text: string;
  /** The body had more than `maxBytes` bytes; `text` holds only the first ones. */
  overCap: boolean;
}

export async function readCapped(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Capped> {
  const { bytes, overCap } = await readPrefix(body, maxBytes);
  return { text: new TextDecoder().decode(bytes), overCap };
}
