/**
 * The feed and the news sitemaps have no manifest entry: their version comes from a D1 query. So
 * that anonymous repetition costs no query, each request that made one leaves the document's
 * validators (and the news file count) in the location's Cache API under a key of the site, the
 * path and a one-minute time bucket. A repeat in the same bucket answers 304, HEAD or an edge
 * cache hit from them (src/cache/serve.ts `serveWithoutRender`), and a news file past the end
 * 404, without a query. The price: such repeats may lag a change by up to one bucket (60 s).
 */
import type { SitemapDocument } from "../cache/serve.ts";

const BUCKET_MS = 60_000;

export type Validators = Omit<SitemapDocument, "render">;

function cache(): Cache | null {
  return typeof caches === "undefined" ? null : (caches as unknown as { default: Cache }).default;
}

const keyOf = (origin: string, name: string, now: number): Request => new Request(`${origin}${name}?edge-sitemaps-repeat=${Math.floor(now / BUCKET_MS)}`);

async function get<T>(origin: string, name: string, now: number): Promise<T | null> {
  const hit = await cache()
    ?.match(keyOf(origin, name, now))
    .catch(() => undefined);
  return hit ? ((await hit.json()) as T) : null;
}

function put(waitUntil: (p: Promise<unknown>) => void, origin: string, name: string, now: number, value: unknown): void {
  const store = cache();
  if (!store) return;
  const response = new Response(JSON.stringify(value), {
    headers: { "Content-Type": "application/json", "Cache-Control": `max-age=${(2 * BUCKET_MS) / 1000}` },
  });
  waitUntil(store.put(keyOf(origin, name, now), response).catch(() => undefined));
}

/** The validators a request of this bucket left for `doc.path`, if any. */
export const cachedValidators = (origin: string, path: string, now: number): Promise<Validators | null> => get<Validators>(origin, path, now);

export function storeValidators(waitUntil: (p: Promise<unknown>) => void, doc: Validators, now: number): void {
  const { origin, path, file, version, lastChange, tags, contentType } = doc;
  put(waitUntil, origin, path, now, { origin, path, file, version, lastChange, tags, contentType });
}

const NEWS_COUNT = "/edge-sitemaps-news-files";

/** How many news files the site had in this bucket, if a request found out. */
export const cachedNewsFiles = async (origin: string, now: number): Promise<number | null> =>
  (await get<{ files: number }>(origin, NEWS_COUNT, now))?.files ?? null;

export function storeNewsFiles(waitUntil: (p: Promise<unknown>) => void, origin: string, files: number, now: number): void {
  put(waitUntil, origin, NEWS_COUNT, now, { files });
}
