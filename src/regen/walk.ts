/**
 * The walk strategy (a store whose change feed walks the whole site, or without a range scan:
 * KV): the manifest was re-planned from the key rows; this renders the shards lacking a snapshot.
 */
import { paged } from "../core/source.ts";
import type { UrlRecord } from "../core/types.ts";
import { SectionPlanner } from "../manifest/manifest.ts";
import { renderShard } from "../sitemaps.ts";
import type { StagedDocument } from "../snapshots/stage-document.ts";
import type { Run } from "./run.ts";

/**
 * Walk mode: the manifest was re-planned from the key rows; render shards lacking a snapshot,
 * except those whose last failure's retry time (`waiting`) has not come yet.
 */
export async function walk(run: Run, waiting: (entry: { section: string; n: number }) => boolean): Promise<void> {
  const { deps, origin } = run;
  for (const entry of run.draft.all()) {
    if (entry.urlCount === 0 || entry.snapshot || waiting(entry)) continue;
    if (run.exhausted()) break;
    run.counters.shardsChecked++;
    // Fingerprint what is rendered with the planner itself: the bytes are stored only if they
    // are exactly the version the walk planned (records may change between the two reads).
    const check = new SectionPlanner(
      entry.section,
      [entry],
      { maxUrls: Infinity, maxBytes: Infinity, overheadBytes: 0 },
      run.build.renderFingerprint,
      run.now,
    );
    const range = { origin, section: entry.section, firstKey: entry.firstKey, lastKey: entry.lastKey };
    async function* tapped(): AsyncGenerator<readonly UrlRecord[]> {
      for await (const page of deps.store.reader.recordPages(range)) {
        run.counters.rowsRead += page.length;
        for (const record of page) check.add({ section: entry.section, key: record.key, updatedAt: record.updatedAt, deleted: false, size: 0 });
        yield page;
      }
    }
    let doc: StagedDocument;
    try {
      doc = await run.snapshots.stage(renderShard(deps, origin, entry, paged(tapped())));
    } catch (err) {
      run.fail(entry, err);
      continue;
    }
    const [rendered] = check.finish(entry.lastKey);
    if (rendered?.version !== entry.version) continue; // changed meanwhile: the next run's walk sees it
    await run.commitShard(entry, doc);
  }
}
