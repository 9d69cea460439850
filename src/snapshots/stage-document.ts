/** Rendering a document into a snapshot store's staging, counting its uncompressed bytes. */
import type { BeforeWrite, SnapshotStore, StagedSnapshot } from "./store.ts";

/** A rendered document staged into a snapshot store, with its uncompressed size. */
export interface StagedDocument {
  staged: StagedSnapshot;
  xmlBytes: number;
}

/**
 * Gzips a rendered document into the store's staging (parts written as they fill). Rejects when
 * the render or a write fails, so a partial document is never committed.
 */
export async function stageDocument(store: SnapshotStore, xml: ReadableStream<Uint8Array>, beforeWrite: BeforeWrite): Promise<StagedDocument> {
  let xmlBytes = 0;
  const counted = xml.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        xmlBytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }),
  );
  const staged = await store.stage(
    counted.pipeThrough(new CompressionStream("gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>),
    beforeWrite,
  );
  return { staged, xmlBytes };
}
