/**
 * Bench routes of registered sites (bench/tenants.ts, docs/tenants.md): registration through the
 * platform API, the heartbeat and every job it leads to, one invocation each, a request as the
 * entry runs it, and the registry's list read (a resolver's list miss).
 *
 * The harness has no queue consumer, so what the heartbeat and the jobs send goes to a queue kept
 * in this isolate (`JOBS` replaced by a recorder, as test/workers/support/jobs.ts records it), and
 * `t/consume` delivers its next message to the real consumer (`consumeJobs` with the entry's
 * dispatch table and services, src/index.ts), one message per invocation as wrangler.jsonc
 * configures the queue.
 *
 * Each invocation runs under the enforcing meter (`runMetered`). The routes that run several
 * invocations (`t/register`: 100 POSTs, each its own) or swap a binding before the meter wraps it
 * (`t/heartbeat`, `t/consume`: the recorded queue) call `runMetered` themselves and answer what
 * each invocation used as `used` (bench/tenants.ts records it per path); they are therefore
 * `metered: false` in the table.
 */

import { D1SiteRegistry } from "../../src/adapters/d1/site-registry.ts";
import { recordColumns } from "../../src/adapters/d1/writer.ts";
import { validateBatch } from "../../src/core/validate.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { app } from "../../src/http/app.ts";
import { JOBS, servicesOfJob } from "../../src/job-dispatch.ts";
import { consumeJobs } from "../../src/jobs/consumer.ts";
import { heartbeat } from "../../src/jobs/heartbeat.ts";
import type { Job } from "../../src/jobs/messages.ts";
import type { Meter } from "../../src/jobs/meter.ts";
import { LISTED_SETTINGS_BYTES, RegistryResolver } from "../../src/registry/resolve.ts";
import { databaseServices, registeredSites, services, siteRegistry } from "../../src/services.ts";
import { type Route, type RouteEntry, runMetered } from "./metering.ts";

/** What bench-worker.ts counts per call (its D1Counter), and its counting wrapper, handed in: no import cycle. */
interface D1Counter {
  rowsRead: number;
  rowsWritten: number;
  queries: number;
  bySql: Record<string, { rowsRead: number; queries: number }>;
}
type Counting = (db: D1Database, counter: D1Counter) => D1Database;
let countingD1: Counting;

const json = (value: unknown, status = 200): Response => Response.json(value, { status });

interface Pending {
  id: string;
  body: Job;
  dueAt: number;
  attempts: number;
}

/** The JOBS queue of this isolate: what was sent and not yet delivered. */
const pending: Pending[] = [];
let ids = 0;
const sentByKind: Record<string, number> = {};

const recorder = {
  async send(body: Job, options?: { delaySeconds?: number }): Promise<void> {
    add(body, options?.delaySeconds);
  },
  async sendBatch(messages: Iterable<{ body: Job; delaySeconds?: number }>): Promise<void> {
    for (const m of messages) add(m.body, m.delaySeconds);
  },
};

function add(body: Job, delaySeconds = 0): void {
  pending.push({ id: `b${++ids}`, body: structuredClone(body), dueAt: Date.now() + delaySeconds * 1000, attempts: 0 });
  sentByKind[body.kind] = (sentByKind[body.kind] ?? 0) + 1;
}

/** env with the recording queue; one object per env, so the services wired on it stay cached. */
const recorded = new WeakMap<object, Env>();
function withRecorder(env: Env): Env {
  let out = recorded.get(env);
  if (!out) recorded.set(env, (out = { ...env, JOBS: recorder as unknown as Queue } as Env));
  return out;
}

/** A metered invocation's answer, its `usage` handed back as `used` (the harness records only `usage`). */
async function answer(response: Response): Promise<Record<string, unknown>> {
  const { usage, ...body } = (await response.json()) as Record<string, unknown>;
  return { ...body, used: usage, status: response.status };
}

/**
 * `count` sites `https://t{start}.test`, … registered through the platform API: each POST one
 * invocation of the app under its own meter, as the entry runs a request.
 */
const register: Route = async (env, ctx, url, request) => {
  const start = Number(url.searchParams.get("start"));
  const count = Number(url.searchParams.get("count"));
  const token = url.searchParams.get("token")!;
  const base = url.searchParams.get("base")!;
  const out: Record<string, unknown>[] = [];
  for (let i = start; i < start + count; i++) {
    const post: Route = async (metered, c) => {
      const res = await app.fetch(
        new Request(new URL("/sitemap-admin/sites", base), {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ origin: `https://t${i}.test` }),
        }),
        metered,
        c,
      );
      const body = (await res.json()) as { token?: string; error?: string; message?: string };
      return json({ created: res.status, token: typeof body.token === "string", error: body.message ?? body.error ?? null });
    };
    out.push(await answer(await runMetered(post, env, ctx, url, request)));
  }
  return json({ results: out });
};

/** One heartbeat, as the entry's `scheduled` runs it (its own invocation), sending to this isolate's queue. */
const beat: Route = async (env, ctx, url, request) => {
  const run: Route = async (metered) => {
    const registry = siteRegistry(metered);
    const sent = await heartbeat(databaseServices(metered), Date.now(), registry && { registry, home: services(metered) });
    return json({ sent });
  };
  return json({ ...(await answer(await runMetered(run, withRecorder(env), ctx, url, request))), pending: pending.length });
};

/**
 * Delivers the queue's next due message to the real consumer, as its own invocation (a retried one
 * goes back, due at once; after 5 retries it is dropped as dead). `{ idle }` when none is due.
 */
const consume: Route = async (env, ctx, url, request) => {
  pending.sort((a, b) => a.dueAt - b.dueAt);
  const next = pending[0];
  if (!next) return json({ idle: true, pending: 0 });
  if (next.dueAt > Date.now()) return json({ idle: true, pending: pending.length, dueInMs: next.dueAt - Date.now() });
  pending.shift();
  next.attempts++;
  let result: "acked" | "retried" | "dead" = "acked";
  const run: Route = async (metered, c, _url, _request, meter) => {
    const message = {
      id: next.id,
      timestamp: new Date(),
      attempts: next.attempts,
      body: next.body,
      ack: () => undefined,
      retry: () => {
        result = next.attempts > 5 ? "dead" : "retried";
      },
    };
    const batch = { queue: "edge-sitemaps-jobs", messages: [message], ackAll: () => undefined, retryAll: () => message.retry() };
    await consumeJobs(batch as unknown as MessageBatch<unknown>, metered, c, {
      handlers: JOBS,
      servicesOf: servicesOfJob,
      sites: registeredSites,
      meter: meter as Meter,
    });
    return json({});
  };
  const done = await answer(await runMetered(run, withRecorder(env), ctx, url, request));
  if (result === "retried") pending.push({ ...next, dueAt: Date.now() });
  return json({ ...done, kind: next.body.kind, origin: next.body.origin, step: next.body.step, result, pending: pending.length });
};

const ROWS_PER_INSERT = 300;
const sqlValue = (v: unknown): string =>
  v === null || v === undefined ? "NULL" : typeof v === "number" ? String(v) : `'${String(v).replaceAll("'", "''")}'`;

/**
 * Scaffolding: `per` demo records of section `pages` for each of the sites `https://t{start}.test`…
 * (`origin`: that one site instead), inserted straight into D1 as bench-worker.ts `seed` does (no
 * write through the API: its debounced regeneration would be a chain of its own, and the heartbeat
 * leaves a site with a live chain to it).
 */
const seedSites: Route = async (env, _ctx, url) => {
  const p = (k: string) => Number(url.searchParams.get(k));
  const one = url.searchParams.get("origin");
  const origins = one ? [one] : Array.from({ length: p("count") }, (_, k) => `https://t${p("start") + k}.test`);
  const stamp = p("stamp");
  const rows: string[] = [];
  for (const origin of origins) {
    const records = validateBatch(demoSection(origin, "pages", p("per")), { sites: new Set([origin]), defaultSection: "pages" });
    for (const r of records) rows.push(`(${[r.origin, ...recordColumns(r), stamp + rows.length].map(sqlValue).join(",")})`);
  }
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    statements.push(
      env.DB.prepare(
        `INSERT INTO urls (origin, section, loc, lastmod, changefreq, priority, ext, size, updated_at) VALUES ${rows.slice(i, i + ROWS_PER_INSERT).join(",")}`,
      ),
    );
  }
  await env.DB.batch(statements);
  return json({ seeded: rows.length });
};

/** The queue's state: messages pending, and sent per kind since the isolate started. */
const queueState: Route = async () => json({ pending: pending.length, sentByKind });

/** GET `target` (an absolute URL: any host) as the entry runs a request; the body read to its end. Metered. */
const get: Route = async (env, ctx, url) => {
  const response = await app.fetch(new Request(url.searchParams.get("target")!), env, ctx);
  let bytes = 0;
  if (response.body) for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
  return json({ status: response.status, bytes, source: response.headers.get("X-Sitemap-Source") });
};

/**
 * A resolver's list miss: `SiteRegistry.liveSites()` (one query, every live site, small settings with it; rows read
 * counted) and the Map each isolate builds of it; `origin`: a fresh resolver's first `resolve` (the list alone). Metered.
 */
const live: Route = async (env, _ctx, url) => {
  const counter: D1Counter = { rowsRead: 0, rowsWritten: 0, queries: 0, bySql: {} };
  const registry = new D1SiteRegistry(countingD1(env.DB, counter));
  const origin = url.searchParams.get("origin");
  if (url.searchParams.get("tick") === "1") {
    const t = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 0));
    return json({ ms: performance.now() - t });
  }
  const started = performance.now();
  let sites: number;
  let found: boolean | null = null;
  if (origin) {
    const resolver = new RegistryResolver(registry, 60_000);
    found = (await resolver.resolve(origin, Date.now(), () => undefined)) !== null;
    sites = -1;
  } else {
    const rows = await registry.liveSites(LISTED_SETTINGS_BYTES);
    sites = new Map(rows.map((r) => [r.origin, r])).size;
  }
  // workerd's clock moves only at I/O: a timer's turn picks up the time the work took (the timer itself is measured apart: `tick`).
  await new Promise((resolve) => setTimeout(resolve, 0));
  const ms = performance.now() - started;
  return json({ ms, sites, found, rowsRead: counter.rowsRead, queries: counter.queries });
};

/** The routes (bench-worker.ts's table), with its counting wrapper handed in: no import cycle. */
export function tenantRoutes(counting: Counting): Record<string, RouteEntry> {
  countingD1 = counting;
  return {
    "/__bench/t/register": { metered: false, run: register },
    "/__bench/t/seed": { metered: false, run: seedSites },
    "/__bench/t/heartbeat": { metered: false, run: beat },
    "/__bench/t/consume": { metered: false, run: consume },
    "/__bench/t/queue": { metered: false, run: queueState },
    "/__bench/t/get": { metered: true, run: get },
    "/__bench/t/live": { metered: true, run: live },
  };
}
