/** The admin API as a site owner's tooling meets it (docs/ingest.md, docs/regeneration.md). */
import { send } from "./http.ts";

/** Passed to wrangler dev as `--var ADMIN_TOKEN:…` (overrides .dev.vars). */
export const ADMIN_TOKEN = "e2e-admin-token-7f3c9a-0123456789abcdef";

export interface JsonAnswer<T = Record<string, unknown>> {
  status: number;
  json: T;
}

async function adminCall<T>(port: number, method: string, path: string, body?: unknown): Promise<JsonAnswer<T>> {
  const res = await send(port, {
    method,
    path: `/sitemap-admin${path}`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  let json: T;
  try {
    json = JSON.parse(res.body.toString()) as T;
  } catch {
    json = { raw: res.body.toString().slice(0, 500), error: res.error } as T;
  }
  return { status: res.status, json };
}

export interface UpsertAnswer {
  received: number;
  inserted: number;
  updated: number;
  unchanged: number;
}

export function putUrls(port: number, records: readonly object[]): Promise<JsonAnswer<UpsertAnswer>> {
  return adminCall<UpsertAnswer>(port, "PUT", "/urls", records);
}

export function deleteUrls(port: number, locs: readonly string[]): Promise<JsonAnswer<{ received: number; deleted: number }>> {
  return adminCall(port, "DELETE", "/urls", locs);
}

export interface StatusAnswer {
  manifest: { version: string; urls: number; shards: number; withoutSnapshot: string[] } | null;
  regeneration: { running: boolean; pendingShards: number; passPending: unknown };
  runs: { id: number; ok: boolean; trigger: string; published: boolean; converged: boolean; error?: string; mode: string; changed: string[] }[];
  notifications: { target: string; pending: number; failures: number; httpStatus: number | null; nextAttempt: string | null }[];
}

export function adminStatus(port: number): Promise<JsonAnswer<StatusAnswer>> {
  return adminCall<StatusAnswer>(port, "GET", "/status");
}

export function regenerateNow(port: number): Promise<JsonAnswer> {
  return adminCall(port, "POST", "/regenerate");
}
