/** What one import does: the command line's result (see cli.ts), runImport's input. */
import type { Format } from "./readers.ts";

export interface ImportOptions {
  input: string;
  format?: Format;
  dryRun: boolean;
  skipInvalid: boolean;
  /** Worker base URL. */
  url: string;
  token?: string;
  /** Only these origins are accepted locally (otherwise the server's SITES decide). */
  sites?: string[];
  /** Section for records without one (otherwise the server's DEFAULT_SECTION). */
  section?: string;
  /** Rewrite every loc (and same-origin hreflang hrefs) to this origin. */
  origin?: string;
  /**
   * Local preview: when the input's origin is not a configured site of the (local) Worker, import
   * every loc under the Worker's own origin instead of stopping.
   */
  autoRehost: boolean;
  /**
   * --sync: make the scope (the input's sites, or `section` of them) equal to the input; records
   * of the scope the input lacks are deleted after the whole input was sent.
   */
  sync: boolean;
  /** --max-delete: the largest share (0–1) of the scope a sync may delete. */
  maxDelete: number;
  /** After a successful import that changed something, POST /sitemap-admin/regenerate. */
  regenerate: boolean;
  batchSize: number;
  maxBatchBytes: number;
  retries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  noFetch: boolean;
  /** Hosts a remote index may lead to besides its own (--allow-host). */
  allowHosts: string[];
  /** Most decompressed bytes of one gzip input (--max-decompressed). */
  maxDecompressed: number;
  /**
   * Today's strict reading (--strict): a record with any invalid part is invalid, and a repeated
   * loc is an error. By default the importer drops what the record model cannot represent and
   * keeps the last of repeated locs.
   */
  strict: boolean;
  progressMs: number;
  quiet: boolean;
  /** Most bad lines printed (all are counted). */
  maxReported: number;
  /**
   * Skip duplicate detection across batches (it keeps every loc in memory, ~125 bytes each);
   * duplicates within one batch are still rejected.
   */
  noDedupe?: boolean;
}
