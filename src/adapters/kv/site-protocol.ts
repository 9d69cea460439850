/**
 * What the Worker and a site's writer object (site-writer.ts) say to each other: a batch for one
 * site, the answer as a plain value (RPC turns thrown errors into bare Errors), and the binding as
 * the Worker uses it. Types only, so Node-side code that wires the store never loads the object.
 */
import type { ValidRecord } from "../../core/validate.ts";
import type { KvDeleteResult, KvUpsertResult } from "./writer.ts";

/** One batch for one site, as the Worker sends it to the site's writer. */
export type SiteOp = { kind: "upsert"; records: ValidRecord[]; now: number } | { kind: "delete"; locs: string[]; now: number };

export type SiteAnswer =
  | { ok: true; result: KvUpsertResult | KvDeleteResult }
  /** Nothing of this batch was written; send it again after `retryAfter` seconds. */
  | { ok: false; kind: "busy"; message: string; retryAfter: number }
  /** Over the KV operation budget; nothing was written. */
  | { ok: false; kind: "budget"; message: string }
  /** Failed partway; the next batch finishes it. */
  | { ok: false; kind: "partial"; message: string }
  /** Failed before any write; nothing was written. */
  | { ok: false; kind: "failed"; message: string };

/** The KV_WRITERS binding (a DurableObjectNamespace of KvSiteWriter), as far as the Worker uses it. */
export interface SiteWriters {
  idFromName(name: string): unknown;
  get(id: never): { write(op: SiteOp): Promise<SiteAnswer> };
}
