/**
 * A KV site under KV's documented behaviour for a test: its writer object and the Worker both see
 * the URLS namespace through the eventual wrapper (support/eventual-kv.ts), and the admin API, the
 * cron and crawlers are called through the real Worker entry.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import worker from "../../../src/index.ts";
import { freshOrigin } from "../support.ts";
import { type EventualKv, eventualKv } from "./eventual-kv.ts";
import { runCron, withJobs } from "./jobs.ts";
import { objectUsesKv } from "./kv-objects.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A fresh KV site whose writer object and Worker both see KV through the eventual wrapper. `vars`
 * override the Worker's env (URLS stays the wrapper); `restores` gets what gives the object its
 * real binding back (run it after the test).
 */
export async function eventualSite(
  label: string,
  restores: (() => Promise<void>)[],
  vars: Record<string, unknown> = {},
): Promise<{ origin: string; e: Env; kv: EventualKv }> {
  const origin = freshOrigin(label);
  const kv = eventualKv(env.URLS);
  restores.push(await objectUsesKv(origin, kv.kv));
  const e = {
    // Background work goes through a recording JOBS queue that `cron` drains (support/jobs.ts).
    ...withJobs(env as Env).env,
    SITES: origin,
    URL_SOURCE: "kv",
    MANIFEST_STORE: "kv",
    EDGE_CACHE_TTL: "0",
    MANIFEST_CACHE_TTL: "0",
    ...vars,
    URLS: kv.kv,
  } as unknown as Env;
  return { origin, e, kv };
}

export async function call(e: Env, url: string, init: RequestInit = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(url, init) as Request<unknown, IncomingRequestCfProperties>, e, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** One PUT of a batch through the admin API. */
export function putBatch(e: Env, origin: string, records: object[]): Promise<Response> {
  return call(e, `${origin}/sitemap-admin/urls`, {
    method: "PUT",
    headers: { ...AUTH, "Content-Type": "application/json" },
    body: JSON.stringify(records),
  });
}

/** PUTs a batch until it is acknowledged, retrying as the answer says. */
export async function putUntilStored(e: Env, origin: string, records: object[]): Promise<void> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const response = await putBatch(e, origin, records);
    if (response.status === 200) return;
    expect(response.status, await response.clone().text()).toBe(503);
    await sleep(Number(response.headers.get("retry-after")) * 1000);
  }
  throw new Error("no 200 after 40 attempts");
}

/** The cron heartbeat, then every job it queued (and their continuations) run to the end. */
export async function cron(e: Env): Promise<void> {
  await runCron(e);
}

/** `size` records `/b{n}/r{i}` of a site. */
export const batch = (origin: string, n: number, size: number, lastmod = "2026-11-01") =>
  Array.from({ length: size }, (_, i) => ({ loc: `${origin}/b${n}/r${i}`, lastmod }));
