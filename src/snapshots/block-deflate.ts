/**
 * The deflate the block codec (src/core/gzip-blocks.ts) runs on: node:zlib, which workerd provides
 * under this project's compatibility date (nodejs_compat) with the flush modes, dictionaries and
 * CRC-32 the codec needs, and Node has for the CLI and the benches. CompressionStream cannot serve:
 * its deflate-raw always ends with the final bit set.
 */
import { constants, crc32, deflateRawSync, inflateRawSync } from "node:zlib";
import type { RawDeflate } from "../core/gzip-blocks.ts";

/** zlib's default level, as gzip -6 and CompressionStream use. */
const LEVEL = 6;

export const zlibBlockDeflate: RawDeflate = {
  deflate: (input, dictionary) =>
    deflateRawSync(input, { level: LEVEL, finishFlush: constants.Z_FULL_FLUSH, ...(dictionary === null ? {} : { dictionary }) }),
  // A block is not final: read up to its end as a flush, not as a stream cut short.
  inflate: (deflated, dictionary) => inflateRawSync(deflated, { finishFlush: constants.Z_SYNC_FLUSH, ...(dictionary === null ? {} : { dictionary }) }),
  crc32: (input) => crc32(input),
};
