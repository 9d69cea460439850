/** The counts an import ends with: printed as one line, or as JSON with --json. */
import { plural } from "../../src/core/plural.ts";
import type { ImportOptions } from "./options.ts";

export interface ImportSummary {
  input: string;
  mode: "dry-run" | "import" | "import (skip invalid)" | "sync" | "sync (skip invalid)";
  /** Valid records read (per pass). */
  records: number;
  /** Lines or records rejected locally or by the server. */
  invalid: number;
  sent: number;
  inserted: number;
  updated: number;
  unchanged: number;
  /** Records of the scope a sync deleted (null: not a sync). */
  deleted: number | null;
  /** The server's id of the sync (null: not a sync, or never started). */
  syncId: string | null;
  batches: number;
  retries: number;
  /**
   * What was not imported, by kind: elements the record model has no field for, extension
   * entries it cannot represent (the URL kept without them), feed entries without a link.
   */
  dropped: Record<string, number>;
  /** Locs that repeat an earlier one (after normalisation): the last occurrence was kept. */
  duplicates: number;
  /** Origin every loc was rewritten to (--origin, or a local preview), if any. */
  rehostedTo: string | null;
  /** Whether POST /sitemap-admin/regenerate ran (null: not attempted). */
  regenerated: boolean | null;
  elapsedMs: number;
}

export function newSummary(options: ImportOptions): ImportSummary {
  return {
    input: options.input,
    mode: options.dryRun ? "dry-run" : (`${options.sync ? "sync" : "import"}${options.skipInvalid ? " (skip invalid)" : ""}` as ImportSummary["mode"]),
    records: 0,
    invalid: 0,
    sent: 0,
    inserted: 0,
    updated: 0,
    unchanged: 0,
    deleted: null,
    syncId: null,
    batches: 0,
    retries: 0,
    dropped: {},
    duplicates: 0,
    rehostedTo: options.origin ?? null,
    regenerated: null,
    elapsedMs: 0,
  };
}

/** The one-line summary on stdout. */
export function summaryLine(s: ImportSummary): string {
  const n = (x: number) => x.toLocaleString("en-US");
  if (s.mode === "dry-run") {
    return `dry run of ${s.input}: ${plural(s.records, "valid record")}, ${n(s.invalid)} invalid, ${n(s.duplicates)} repeated; nothing sent (${(s.elapsedMs / 1000).toFixed(1)} s)\n`;
  }
  return (
    `${s.input}: sent ${plural(s.sent, "record")} in ${plural(s.batches, "batch", "batches")}: ${n(s.inserted)} inserted, ${n(s.updated)} updated, ${n(s.unchanged)} unchanged${s.deleted === null ? "" : `, ${n(s.deleted)} deleted`}; ` +
    `${n(s.invalid)} invalid, ${n(s.duplicates)} repeated; ${plural(s.retries, "retry", "retries")} (${(s.elapsedMs / 1000).toFixed(1)} s)\n`
  );
}
