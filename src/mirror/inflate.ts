/**
 * Gzip undone in small slices, at most `maxBytes` out (docs/mirror.md "Gzip").
 *
 * workerd's DecompressionStream inflates each chunk written to it at once, whatever reads its
 * output: no backpressure within one chunk. So piping a body through it lets a small chunk become
 * a huge output queued in the isolate before any cap can look at it — measured: one write of a
 * 1 MB gzip of 1 GiB of zeros grew workerd's memory by ~1 GiB. Here the decompressor is fed at
 * most SLICE_BYTES at a time, and all a slice inflated to is read (and counted against the cap)
 * before the next slice is written: what is queued at any moment is one slice's output, at most
 * ~1,032 × SLICE_BYTES (deflate's largest ratio) — 8 MiB for 8 KiB slices.
 */

/** Compressed bytes written to the decompressor at a time (measurement: docs/mirror.md "Gzip"). */
export const SLICE_BYTES = 8 * 1024;

/** More than `maxBytes` came out: the reading stopped there. */
export class InflatedTooLarge extends Error {
  override readonly name = "InflatedTooLarge";
}

/** Not gzip, or cut short: the decompressor refused it. */
export class CorruptGzip extends Error {
  override readonly name = "CorruptGzip";
}

const IDLE = Symbol("idle");

/** `p`'s result if it is ready by the next turn of the event loop, else IDLE (p stays pending). */
async function readyOrIdle<T>(p: Promise<T>): Promise<T | typeof IDLE> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = new Promise<typeof IDLE>((resolve) => {
    timer = setTimeout(() => resolve(IDLE), 0);
  });
  try {
    return await Promise.race([p, idle]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The inflated bytes of the gzip `input`. Throws InflatedTooLarge past `maxBytes` (having held
 * at most one slice's output), CorruptGzip when the data is not gzip or is cut short; errors of
 * `input` itself pass through.
 */
export async function* inflateCapped(input: AsyncIterable<Uint8Array>, maxBytes: number, sliceBytes = SLICE_BYTES): AsyncGenerator<Uint8Array> {
  const stream = new DecompressionStream("gzip");
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  let total = 0;
  const nextRead = (): Promise<ReadableStreamReadResult<Uint8Array>> => {
    pending ??= reader.read();
    // Handled here, awaited below: a decompressor error while a write is awaited is not unhandled.
    pending.catch(() => undefined);
    return pending;
  };
  const counted = (value: Uint8Array): Uint8Array => {
    total += value.byteLength;
    if (total > maxBytes) throw new InflatedTooLarge(`more than ${maxBytes} bytes decompressed`);
    return value;
  };
  const corrupt = async <T>(p: Promise<T>): Promise<T> => {
    try {
      return await p;
    } catch (err) {
      throw new CorruptGzip(err instanceof Error ? err.message : String(err));
    }
  };
  let ended = false;
  try {
    for await (const chunk of input) {
      for (let at = 0; at < chunk.byteLength && !ended; at += sliceBytes) {
        await corrupt(writer.write(chunk.subarray(at, at + sliceBytes)));
        // Everything this slice inflates to is queued by now: read it all before the next slice.
        for (;;) {
          const result = await corrupt(readyOrIdle(nextRead()));
          if (result === IDLE) break;
          pending = null;
          if (result.done) {
            ended = true;
            break;
          }
          yield counted(result.value);
        }
      }
    }
    if (!ended) {
      await corrupt(writer.close());
      for (;;) {
        const result = await corrupt(nextRead());
        pending = null;
        if (result.done) break;
        yield counted(result.value);
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
    await writer.abort().catch(() => undefined);
  }
}
