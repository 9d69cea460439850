/** What a reader yields for one line or entry of an input. */
export interface Item {
  line: number;
  input?: Record<string, unknown>;
  /** Why this line is not a record. */
  error?: string;
  /** Set for a sitemap index entry: the shard's loc. */
  sitemap?: string;
}
