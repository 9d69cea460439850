/** Decoded input bytes: lines with their numbers, or text chunks, both strict UTF-8. */
import { InputError, TooLarge } from "./input.ts";

export interface Line {
  line: number;
  text?: string;
  error?: string;
}

/** Lines (LF or CRLF) with 1-based numbers; a line that is not valid UTF-8 comes with `error`. */
export async function* lines(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<Line> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let pending: Buffer = Buffer.alloc(0);
  let n = 0;
  const decode = (slice: Buffer): Line => {
    n += 1;
    const end = slice.length > 0 && slice[slice.length - 1] === 0x0d ? slice.length - 1 : slice.length;
    try {
      let text = decoder.decode(slice.subarray(0, end));
      if (n === 1 && text.startsWith("\uFEFF")) text = text.slice(1);
      return { line: n, text };
    } catch {
      return { line: n, error: "line is not valid UTF-8" };
    }
  };
  for await (const chunk of located(bytes, (file) => `${file}:${n + 1}`)) {
    const buf: Buffer = pending.length > 0 ? Buffer.concat([pending, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (let nl = buf.indexOf(0x0a); nl !== -1; nl = buf.indexOf(0x0a, start)) {
      yield decode(buf.subarray(start, nl));
      start = nl + 1;
    }
    pending = Buffer.from(buf.subarray(start));
    if (pending.length > 16 * 1024 * 1024) throw new InputError(`line ${n + 1} is longer than 16 MiB`);
  }
  if (pending.length > 0) yield decode(pending);
}

/** Decoded text chunks (strict UTF-8); `where()` names the position for the error. */
export async function* texts(bytes: AsyncIterable<Uint8Array>, where: () => string): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  try {
    for await (const chunk of located(bytes, () => where())) yield decoder.decode(chunk, { stream: true });
    yield decoder.decode();
  } catch (err) {
    if (err instanceof TypeError) throw new InputError(`${where()}: not valid UTF-8`);
    throw err;
  }
}

/** The input's bytes; a size cap hit while reading them is reported where the reading got to. */
async function* located(bytes: AsyncIterable<Uint8Array>, where: (file: string) => string): AsyncGenerator<Uint8Array> {
  try {
    yield* bytes;
  } catch (err) {
    if (err instanceof TooLarge) throw new InputError(`${where(err.file)}: ${err.detail}`);
    throw err;
  }
}
