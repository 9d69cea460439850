/**
 * When a site's robots.txt fetch last came back into this Worker (a loop: src/http/robots/loop.ts),
 * kept so that /sitemap-admin/status can show the configuration problem, which no single request
 * sees. Kept in KV (src/adapters/kv/robots-loop.ts); src/http/robots/loop-record.ts decides when to
 * write and clear it, src/robots/status.ts reads it.
 */
export interface RobotsLoopStore {
  /** When the loop was last recorded (ms since epoch), or null when none is (never, cleared, expired, not visible here yet). */
  lastSeen(origin: string): Promise<number | null>;
  /** Records a loop seen at `at`. */
  record(origin: string, at: number): Promise<void>;
  /** Forgets the loop: the origin answered again. */
  clear(origin: string): Promise<void>;
}
