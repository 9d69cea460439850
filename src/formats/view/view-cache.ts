/**
 * The browser view's per-version cache of a shard (docs/browser-view.md "Cost"): what lets a page
 * read only its own rows and a filter read no record at all, once the shard's version has been
 * read through one time at this location.
 *
 *   digest   the stable key of the first row of every page (1,000 rows a page) and the row count:
 *            what a page needs to read only its own key range from the record store;
 *   pages    each page's table rows, numbered, one a line (view-row.ts): a page of a version
 *            already read through is one cache read, no record read;
 *   locs     the locs as shown, lowercased (view-row.ts matchText), one a line, 5,000 rows an entry: what a filter matches against;
 *            it then reads the pages of the rows it shows.
 *
 * Keys are the shard's URL and the site's registration plus the content version (and this format's
 * number; src/documents/cache-keys.ts), so a new version is a new key and stale entries simply expire. The entries live in a cache of their own
 * (`caches.open`), apart from `caches.default` where only the documents' bytes are kept
 * (src/http/cache/edge.ts): nothing here is ever sent to a client as is, and the HTML page itself stays
 * `private, no-store`. The digest is written only after every other entry was, so a digest found
 * means a complete set was written; a filter notices an entry evicted since before it shows any
 * row (and reads the shard again), a page falls back to its keyset read.
 */
import { VIEW_PAGE_ROWS } from "../../core/limits.ts";
import { type CachedSite, cacheKey } from "../../documents/cache-keys.ts";

/** The named cache the view's entries live in (apart from `caches.default`). */
export const VIEW_CACHE_NAME = "sitemap-view";
/** Bump when the digest, the row markup or the match lines change: entries of an older deploy are never read. */
const FORMAT = 3;
/** Rows per locs entry: 10 entries for a full shard, ~0.4 MB each for ordinary URLs. */
const LOCS_ROWS = 5_000;

export interface ShardDigest {
  /** Stable key of the first row of page 1, 2, …: page N reads keys [starts[N-1], starts[N]). */
  starts: number[];
  /** Rows when the digest was made. */
  rows: number;
}

function isDigest(value: unknown): value is ShardDigest {
  const d = value as ShardDigest;
  return typeof d === "object" && d !== null && Array.isArray(d.starts) && d.starts.every((k) => Number.isSafeInteger(k)) && Number.isSafeInteger(d.rows);
}

export class ViewCache {
  readonly #cache: Cache;
  readonly #base: string;
  readonly #ttl: number;

  constructor(cache: Cache, base: string, ttl: number) {
    this.#cache = cache;
    this.#base = base;
    this.#ttl = ttl;
  }

  #key(kind: string): Request {
    return new Request(`${this.#base}.${kind}`);
  }

  /** A lookup; a Cache API failure counts as a miss (the view then reads the records, as without a cache). */
  async #match(kind: string): Promise<Response | undefined> {
    try {
      return await this.#cache.match(this.#key(kind));
    } catch (err) {
      console.error("browser view cache match failed", err);
      return undefined;
    }
  }

  #put(kind: string, body: string, type: string): Promise<void> {
    return this.#cache.put(this.#key(kind), new Response(body, { headers: { "Content-Type": type, "Cache-Control": `public, max-age=${this.#ttl}` } }));
  }

  async digest(): Promise<ShardDigest | null> {
    const hit = await this.#match("d");
    if (!hit) return null;
    try {
      const value: unknown = await hit.json();
      return isDigest(value) ? value : null;
    } catch {
      return null;
    }
  }

  /** Page `n`'s (0-based) table rows; null when not cached. */
  async page(n: number): Promise<string | null> {
    const hit = await this.#match(`p${n}`);
    try {
      return hit ? await hit.text() : null;
    } catch {
      return null;
    }
  }

  /** The locs entries' texts in order, one read at a time; null when one is gone (all are looked up before any is read). */
  locs(digest: ShardDigest): Promise<AsyncGenerator<string> | null> {
    return this.#all(Array.from({ length: Math.ceil(digest.rows / LOCS_ROWS) }, (_, i) => `m${i}`));
  }

  /** The texts of pages `ns` (0-based) in that order; null when one is gone (all are looked up before any is read). */
  pages(ns: readonly number[]): Promise<AsyncGenerator<string> | null> {
    return this.#all(ns.map((n) => `p${n}`));
  }

  async #all(kinds: readonly string[]): Promise<AsyncGenerator<string> | null> {
    const hits = await Promise.all(kinds.map((kind) => this.#match(kind)));
    const release = async () => {
      for (const hit of hits) if (hit && !hit.bodyUsed) await hit.body?.cancel();
    };
    if (hits.some((hit) => hit === undefined)) {
      await release();
      return null;
    }
    return (async function* () {
      try {
        // One entry read ahead: the next arrives while the current one is scanned.
        let next = hits[0]?.text();
        for (let i = 0; i < hits.length; i++) {
          const text = await next!;
          next = hits[i + 1]?.text();
          next?.catch(() => {}); // awaited on the next turn; a consumer that stops early never does
          yield text;
        }
      } finally {
        await release();
      }
    })();
  }

  /** A builder that stores a digest of the rows given to it, once all of them were. */
  builder(waitUntil: (promise: Promise<unknown>) => void): DigestBuilder {
    return new DigestBuilder(
      (kind, text) => this.#put(kind, text, "text/plain; charset=utf-8"),
      (digest) => this.#put("d", JSON.stringify(digest), "application/json"),
      waitUntil,
    );
  }
}

/**
 * Collects a shard's rows in key order, one after the other, and stores each page and locs entry
 * once full. Only `finish()` after the last row stores the digest; a build that stops early (a
 * client gone, a failed read) leaves no digest, so nothing incomplete is ever read back.
 */
export class DigestBuilder {
  readonly #putEntry: (kind: string, text: string) => Promise<void>;
  readonly #putDigest: (digest: ShardDigest) => Promise<void>;
  readonly #waitUntil: (promise: Promise<unknown>) => void;
  readonly #puts: Promise<void>[] = [];
  readonly #starts: number[] = [];
  #rows = 0;
  #locs = "";
  #page = "";

  constructor(
    putEntry: (kind: string, text: string) => Promise<void>,
    putDigest: (digest: ShardDigest) => Promise<void>,
    waitUntil: (promise: Promise<unknown>) => void,
  ) {
    this.#putEntry = putEntry;
    this.#putDigest = putDigest;
    this.#waitUntil = waitUntil;
  }

  /** The next row: its stable key, its match line and its table row as one line (view-row.ts). */
  add(key: number, matchLine: string, rowLine: string): void {
    if (this.#rows % VIEW_PAGE_ROWS === 0) this.#starts.push(key);
    this.#rows++;
    this.#locs += matchLine;
    this.#page += rowLine;
    if (this.#rows % VIEW_PAGE_ROWS === 0) this.#flushPage();
    if (this.#rows % LOCS_ROWS === 0) this.#flushLocs();
  }

  #put(kind: string, text: string): void {
    const put = this.#putEntry(kind, text);
    put.catch(() => {}); // awaited in finish(); a put that fails before then is not unhandled
    this.#puts.push(put);
  }

  #flushPage(): void {
    this.#put(`p${Math.ceil(this.#rows / VIEW_PAGE_ROWS) - 1}`, this.#page);
    this.#page = "";
  }

  #flushLocs(): void {
    this.#put(`m${Math.ceil(this.#rows / LOCS_ROWS) - 1}`, this.#locs);
    this.#locs = "";
  }

  finish(): void {
    if (this.#page) this.#flushPage();
    if (this.#locs) this.#flushLocs();
    const digest: ShardDigest = { starts: this.#starts, rows: this.#rows };
    this.#waitUntil(
      Promise.all(this.#puts)
        .then(() => this.#putDigest(digest))
        .catch((err: unknown) => console.error("browser view cache put failed", err)),
    );
  }
}

/**
 * The view cache of one shard version at this location; null when there is none (no Cache API, or
 * EDGE_CACHE_TTL=0, which turns the Cache API layer off: the view then reads as it did before).
 */
export async function viewCache(site: CachedSite, path: string, version: string, ttl: number): Promise<ViewCache | null> {
  if (ttl <= 0 || typeof caches === "undefined") return null;
  const cache = await caches.open(VIEW_CACHE_NAME);
  return new ViewCache(cache, viewEntryKey(site, path, version, ""), ttl);
}

/** The key of an entry (`d`, `p<n>`, `m<n>`) of a shard version's view cache; "" for the stem the others add `.<entry>` to. */
export function viewEntryKey(site: CachedSite, path: string, version: string, entry: string): string {
  const stem = cacheKey(site, path, "view", String(FORMAT), version);
  return entry ? `${stem}.${entry}` : stem;
}
