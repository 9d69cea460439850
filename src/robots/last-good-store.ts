/**
 * The last good copy of a site's own robots.txt: the bytes its origin last served with a 2xx (as
 * read, at most 500 KiB), kept so that an origin outage answers with the origin's rules instead of
 * losing them (RFC 9309 §2.3.1.4: an unreachable robots.txt means "disallow all"; Google then uses
 * its last cached copy). Kept in KV (src/adapters/kv/robots-last-good.ts); src/http/robots/ decides
 * when to write and when to serve it.
 */

/** What says whether a copy is still the origin's current file, without reading its bytes. */
export interface LastGoodStamp {
  /** Hash of the bytes (hex), to tell a changed file from the same one. */
  digest: string;
  /** When the origin last served these bytes, as far as this store knows (ms since epoch). */
  fetchedAt: number;
}

export interface LastGoodRobots extends LastGoodStamp {
  body: Uint8Array;
}

export interface RobotsLastGoodStore {
  /** The copy of `origin`, or null when none is kept (never stored, expired, or not visible here yet). */
  get(origin: string): Promise<LastGoodRobots | null>;
  /** Only the stamp of `origin`'s copy: cheap enough to check on every good fetch. */
  stamp(origin: string): Promise<LastGoodStamp | null>;
  /** Replaces `origin`'s copy. */
  put(origin: string, copy: LastGoodRobots): Promise<void>;
  /** Forgets `origin`'s copy (its registered site is purged: a new tenant there must not be served these rules). */
  remove(origin: string): Promise<void>;
}
