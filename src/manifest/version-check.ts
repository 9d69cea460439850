/**
 * Whether the records a render read are exactly a shard's version: the planner's own fingerprint
 * (live keys and change stamps, their count, the render options) of what went by, compared with
 * the manifest entry's `version` when the records end. Used where the request path reads a copy
 * that may trail the records the version was planned from (KV blocks, docs/kv.md "An ETag names
 * its bytes"), so that a body under the version's ETag is never other bytes.
 */
import type { StoredRecord } from "../core/types.ts";
import { SectionPlanner, type ShardEntry } from "./manifest.ts";

/** The records read for a shard are not those of the version it is served under (yet). */
class StaleShardError extends Error {
  override readonly name = "StaleShardError";
}

/**
 * The same pages, failing at their end (before the caller writes a document's closing tag) when
 * they are not exactly `shard.version` and `versioned` resolves true (the bytes go out under the
 * version's validators): the stream of a render over them then errors, so it is a `503` before its
 * first byte and a broken transfer after, never a complete body, never cached. An answer sent
 * without the version's validators (the rows moved past it) takes the bytes as they are.
 */
export async function* versionChecked(
  pages: AsyncIterable<readonly StoredRecord[]>,
  shard: ShardEntry,
  renderFingerprint: string,
  versioned: Promise<boolean>,
): AsyncGenerator<readonly StoredRecord[]> {
  const check = new SectionPlanner(shard.section, [shard], { maxUrls: Infinity, maxBytes: Infinity, overheadBytes: 0 }, renderFingerprint, 0);
  for await (const page of pages) {
    for (const record of page) check.add({ section: shard.section, key: record.key, updatedAt: record.updatedAt, deleted: false, size: 0 });
    yield page;
  }
  const [read] = check.finish(shard.lastKey);
  if (read?.version !== shard.version && (await versioned)) {
    throw new StaleShardError(
      `the records read for ${shard.section}-${shard.n} are not its version ${shard.version} (read ${read?.urlCount ?? 0} of ${shard.urlCount}): ` +
        "the store's request-path copy is behind; retried later",
    );
  }
}
