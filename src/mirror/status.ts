/** Mirrors as /sitemap-admin/status shows them: where each pass is, when it last worked, why it failed; all read in one query. */
import { shownUrl } from "./failure.ts";
import { type MirrorCounts, type MirrorStateStore, noCounts } from "./store.ts";

export interface MirrorStatus {
  url: string;
  /** The one site whose records the mirror writes (null until known). */
  site: string | null;
  state: "idle" | "in-progress" | "failing" | "never-run";
  /**
   * The pass under way: the document it is in (0 = the mirrored one, n = the n-th listed sitemap),
   * records sent of it, and whether it is checking, before its commit, the documents read in earlier runs.
   */
  position: { document: number; recordsDone: number; verifying: boolean } | null;
  lastCheckedAt: string | null;
  lastSyncedAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  counts: MirrorCounts;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export async function mirrorStatus(store: MirrorStateStore | null, urls: readonly string[]): Promise<MirrorStatus[]> {
  if (store === null) return [];
  const states = await store.loadMany(urls);
  return urls.map((url) => {
    const s = states.get(url) ?? null;
    return {
      url: shownUrl(url),
      site: s?.site ?? null,
      state: s === null ? "never-run" : s.error !== null ? "failing" : s.syncId !== null ? "in-progress" : "idle",
      position: s?.syncId ? { document: s.child + 1, recordsDone: s.recordsDone, verifying: s.verifying } : null,
      lastCheckedAt: iso(s?.checkedAt ?? null),
      lastSyncedAt: iso(s?.okAt ?? null),
      lastError: s?.error ?? null,
      lastErrorAt: iso(s?.errorAt ?? null),
      counts: s?.counts ?? noCounts(),
    };
  });
}
