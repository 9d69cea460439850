/** The cron entry of the regeneration: every configured site, one after the other. */
import { indexCacheTag, shardCacheTag } from "../cache/headers.ts";
import { type Services, services } from "../services.ts";
import { type RegenDeps, RegenBusyError, type RegenOptions, type RunSummary, regenerateSite } from "./regenerate.ts";

/** The regeneration's dependencies, or null when a binding it needs is missing. */
export function regenDeps(s: Services): RegenDeps | null {
  if (!s.regen || !s.snapshots) return null;
  return { config: s.config, store: s.store, manifests: s.manifests, snapshots: s.snapshots, state: s.regen };
}

interface PurgeableContext {
  cache?: { purge?: (options: { tags: string[] }) => Promise<unknown> };
}

/**
 * After a publish: purge what changed from the tiered Workers Cache when it is on (`ctx.cache`,
 * docs/caching.md). The per-location Cache API needs nothing: its keys carry the version.
 */
export function purgeChanged(ctx: unknown, origin: string): RegenOptions["onPublished"] {
  const purge = (ctx as PurgeableContext | undefined)?.cache?.purge;
  if (typeof purge !== "function") return undefined;
  return async (changed) => {
    const tags = [...(changed.index ? [indexCacheTag(origin)] : []), ...changed.shards.map((s) => shardCacheTag(origin, s.section, s.n))];
    // Any change re-lists the index (its lastmod moved), so purge it with the shards.
    if (tags.length > 0 && !changed.index) tags.push(indexCacheTag(origin));
    for (let i = 0; i < tags.length; i += 100) {
      await purge.call((ctx as PurgeableContext).cache, { tags: tags.slice(i, i + 100) }).catch((err: unknown) => console.error("cache purge failed", err));
    }
  };
}

/** Regenerates every site; a failing site is logged and the others still run. Never throws. */
export async function regenerateAll(env: Env, ctx?: unknown, trigger = "cron"): Promise<RunSummary[]> {
  let deps: RegenDeps | null;
  let sites: string[];
  try {
    const s = services(env);
    deps = regenDeps(s);
    sites = [...s.config.sites];
  } catch (err) {
    console.error("regeneration skipped:", err instanceof Error ? err.message : err);
    return [];
  }
  if (!deps) {
    console.error("regeneration skipped: it needs the DB (D1) and SNAPSHOTS (KV) bindings");
    return [];
  }
  const summaries: RunSummary[] = [];
  for (const origin of sites) {
    try {
      summaries.push(await regenerateSite(deps, origin, { trigger, onPublished: purgeChanged(ctx, origin) }));
    } catch (err) {
      if (err instanceof RegenBusyError) console.log(JSON.stringify({ event: "sitemap.regeneration.skipped", origin, reason: err.message }));
      // Other failures were logged with their summary by regenerateSite; the next run retries.
    }
  }
  return summaries;
}
