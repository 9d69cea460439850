/**
 * The feed and the news sitemaps have no manifest entry: their version comes from a D1 query. So
 * that anonymous repetition costs no query, each request that made one leaves the document's
 * validators (and the news file count) in the location's Cache API under a key of the site (its
 * origin and registration, src/documents/cache-keys.ts), the path, a one-minute time bucket and the site's manifest version (the "generation": a publish by
 * the cron moves it, so what the cron published is never hidden behind an older entry). A repeat in
 * the same bucket and generation answers 304, HEAD or an edge cache hit from them
 * (src/http/cache/serve.ts `serveWithoutRender`), and a news file past the end 404, without a query.
 * The price: a change not yet published may show up to one bucket (60 s) late.
 */
import { type CachedSite, cacheKey } from "../../documents/cache-keys.ts";
import type { SitemapDocument } from "./serve.ts";

const BUCKET_MS = 60_000;

export type Validators = Omit<SitemapDocument, "render">;

function cache(): Cache | null {
  return typeof caches === "undefined" ? null : (caches as unknown as { default: Cache }).default;
}

/** Where a repeat looks: the time bucket and the site's manifest version. */
export interface RepeatSlot {
  now: number;
  generation: string;
}

const keyOf = (site: CachedSite, name: string, slot: RepeatSlot): Request =>
  new Request(cacheKey(site, name, "repeat", String(Math.floor(slot.now / BUCKET_MS)), slot.generation));

async function get<T>(site: CachedSite, name: string, slot: RepeatSlot): Promise<T | null> {
  const hit = await cache()
    ?.match(keyOf(site, name, slot))
    .catch(() => undefined);
  return hit ? ((await hit.json()) as T) : null;
}

function put(waitUntil: (p: Promise<unknown>) => void, site: CachedSite, name: string, slot: RepeatSlot, value: unknown): void {
  const store = cache();
  if (!store) return;
  const response = new Response(JSON.stringify(value), {
    headers: { "Content-Type": "application/json", "Cache-Control": `max-age=${(2 * BUCKET_MS) / 1000}` },
  });
  waitUntil(store.put(keyOf(site, name, slot), response).catch(() => undefined));
}

/** The validators a request of this bucket left for `doc.path`, if any. */
export const cachedValidators = (site: CachedSite, path: string, slot: RepeatSlot): Promise<Validators | null> => get<Validators>(site, path, slot);

export function storeValidators(waitUntil: (p: Promise<unknown>) => void, site: CachedSite, doc: Validators, slot: RepeatSlot): void {
  const { origin, path, file, version, lastChange, tags, contentType } = doc;
  put(waitUntil, site, path, slot, { origin, path, file, version, lastChange, tags, contentType });
}

const NEWS_COUNT = "/edge-sitemaps-news-files";

/** How many news files the site had in this bucket, if a request found out. */
export const cachedNewsFiles = async (site: CachedSite, slot: RepeatSlot): Promise<number | null> =>
  (await get<{ files: number }>(site, NEWS_COUNT, slot))?.files ?? null;

export function storeNewsFiles(waitUntil: (p: Promise<unknown>) => void, site: CachedSite, files: number, slot: RepeatSlot): void {
  put(waitUntil, site, NEWS_COUNT, slot, { files });
}
