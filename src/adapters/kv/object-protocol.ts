/**
 * What the Worker and a site's writer object (writer-object.ts) say to each other over RPC: a batch
 * for one site and its answer as a plain value (RPC turns thrown errors into bare Errors), the
 * reads the object answers from its SQLite, and the binding as the Worker uses it. Types only, so
 * Node-side code that wires the store never loads the object.
 */
import type { AuditEntry, RefusalCount, RefusalReason, StoredSession } from "../../admin-state/store.ts";
import type { StoredRecord } from "../../core/types.ts";
import type { ValidRecord } from "../../core/validate.ts";
import type { ChangeCursor, ChangePage, ChangeStamp, FoundRecord, NewsStats, ProjectionState, SampledRecord, ScanPosition } from "../../store/port.ts";

/** What applying a batch did (apply-batch.ts). */
export interface BatchCounts {
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
  alreadyDeleted: number;
  notFound: number;
  /** Record rows written (moves included). */
  writes: number;
}

/**
 * A scanned record as the object sends it: section, key, stamp, tombstone (0/1), size, extension
 * kinds, and the entry's JSON text (site-db.ts), parsed by the Worker (object-scan.ts). Text
 * crosses the RPC boundary far cheaper than the objects it parses into.
 */
export type ScanRow = [section: string, key: number, stamp: number, deleted: number, size: number, kinds: number, entry: string];

/**
 * One batch for one site. `now`: an explicit change stamp (tests, tools replaying a history);
 * absent, the object stamps the batch when it commits.
 */
export type SiteOp = { kind: "upsert"; records: ValidRecord[]; now?: number } | { kind: "delete"; locs: string[]; now?: number };

export type SiteAnswer =
  /** Committed in the object's SQLite: every record of the batch is stored. */
  | { ok: true; result: BatchCounts }
  /** Nothing of this batch was written; send it again after `retryAfter` seconds. */
  | { ok: false; kind: "busy"; message: string; retryAfter: number }
  /** Refused or failed before its commit; nothing was written. */
  | { ok: false; kind: "failed"; message: string };

/** The projection's state plus whether the object is still adopting records already in KV. */
export type WriterStatus = ProjectionState;

/** The admin's sessions, audit trail, refusals and cooldowns of the site, for a deployment without D1 (admin-tables.ts). */
export type AdminCall =
  | { op: "create-session"; key: string; session: StoredSession }
  | { op: "session"; key: string }
  | { op: "revoke-session"; key: string; now: number }
  | { op: "record-audit"; entry: AuditEntry }
  | { op: "audit"; limit: number }
  | { op: "record-refusal"; refusal: { at: number; reason: RefusalReason; who: string } }
  | { op: "refusals"; limit: number }
  | { op: "claim-cooldown"; action: string; now: number; until: number };

/** What an admin call answers: a session, audit entries, refusal counts, a cooldown's end, or nothing. */
export type AdminAnswer = StoredSession | AuditEntry[] | RefusalCount[] | number | null;

/** The writer object's RPC surface (KvSiteWriter implements it). Every call names the site. */
export interface SiteWriterRpc {
  write(origin: string, op: SiteOp): Promise<SiteAnswer>;
  find(origin: string, loc: string): Promise<FoundRecord | null>;
  changes(origin: string, after: ChangeCursor | null, limit: number, until: number): Promise<ChangePage>;
  newest(origin: string, until: number): Promise<ChangeStamp | null>;
  pending(origin: string, after: ChangeStamp): Promise<number>;
  scanPage(origin: string, from: ScanPosition, until: ScanPosition | null, limit: number): Promise<{ rows: ScanRow[]; next: ScanPosition | null }>;
  newsStats(origin: string, sinceMs: number, untilMs: number): Promise<NewsStats>;
  newsRecords(origin: string, sinceMs: number, untilMs: number, offset: number, limit: number): Promise<StoredRecord[]>;
  recent(origin: string, limit: number): Promise<StoredRecord[]>;
  /** The live records among the site's `limit` newest changes (object-sample.ts); none while it adopts. */
  sample(origin: string, limit: number): Promise<SampledRecord[]>;
  /** Whether a record of the section's key range (tombstones included) has a change stamp after `stamp`. */
  changedAfter(origin: string, section: string, firstKey: number, lastKey: number, stamp: number): Promise<boolean>;
  status(origin: string): Promise<WriterStatus>;
  /** Projects what is pending now, waiting up to `waitMs` for writes spaced by KV's per-key rate; the status after. */
  settle(origin: string, waitMs: number): Promise<WriterStatus>;
  admin(origin: string, call: AdminCall): Promise<AdminAnswer>;
}

/** The KV_WRITERS binding (a DurableObjectNamespace of KvSiteWriter), as far as the Worker uses it. */
export interface SiteWriters {
  idFromName(name: string): unknown;
  get(id: never): SiteWriterRpc;
}

/** The writer object of a site. */
export const writerOf = (writers: SiteWriters, origin: string): SiteWriterRpc => writers.get(writers.idFromName(origin) as never);
