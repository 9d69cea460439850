/** Rendering a document into a snapshot store's staging, counting its uncompressed bytes. */

import type { BlockLayout } from "../core/gzip-blocks.ts";
import type { RenderedXml } from "../core/render.ts";
import { gzipDocument } from "../documents/gzip.ts";
import type { BeforeWrite, SnapshotStore, StagedSnapshot } from "./store.ts";

/** A rendered document staged into a snapshot store, with its uncompressed size. */
export interface StagedDocument {
  staged: StagedSnapshot;
  xmlBytes: number;
  /** Its deflate blocks in order, when rendered in blocks (core/render.ts `blockCuts`). */
  blocks?: BlockLayout[];
}

/**
 * Gzips a rendered document into the store's staging (parts written as they fill), the way a live
 * response gzips it (documents/gzip.ts). Rejects when the render or a write fails, so a partial
 * document is never committed.
 */
export async function stageDocument(store: SnapshotStore, xml: RenderedXml, beforeWrite: BeforeWrite): Promise<StagedDocument> {
  let xmlBytes = 0;
  const cuts = xml.blockCuts;
  const counted = xml.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        xmlBytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }),
  );
  const blocks: BlockLayout[] = [];
  const staged = await store.stage(
    gzipDocument(counted, cuts, (b) => blocks.push(b)),
    beforeWrite,
  );
  return { staged, xmlBytes, ...(cuts ? { blocks } : {}) };
}
