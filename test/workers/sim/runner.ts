/**
 * Runs one simulated program (issue 49, item 8) through the Worker's own entry points — fetch for the
 * admin API and the crawl, queue for every job delivery, scheduled for the heartbeat — against a
 * fresh site over DB, PART_B, PART_C, PART_D, with a clock of its own (Date only, one second a
 * command), and checks the model after every flip and at the end. A violation throws (fast-check
 * shrinks the program from there).
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { vi } from "vitest";
import worker from "../../../src/index.ts";
import { PIN_GRACE_MS } from "../../../src/partitions/pinned.ts";
import { type Sent, deliver } from "../support/jobs.ts";
import { call } from "../support.ts";
import { AUTH, Violation, checkAdmin, checkCrawl, checkMarkers } from "./checks.ts";
import { type Command, LOCS, type Program } from "./commands.ts";
import { FlakyQueue, killedAfter } from "./faults.ts";
import { SimMirror } from "./mirror.ts";
import { Model, type OpenSync } from "./model.ts";
import { syncServed } from "./served-sync.ts";

const DATABASES = ["DB", "PART_B", "PART_C", "PART_D"] as const;
/** wrangler.jsonc: the consumer's max_retries. */
const MAX_RETRIES = 5;
/** The invocations the end of a program may take to bring every chain to rest (a chain that needs more does not converge). */
const SETTLE_INVOCATIONS = 300;
const FIRST_LOCS = 24;
/** Programs run in this file so far (each its own site). */
let simulated = 0;

interface Layout {
  settled: number;
  target: number;
  flippedAt: number | null;
}

class Simulation {
  /** Numbered, not random: a loc's partition is a hash of it, so the same seed replays the same homes. */
  readonly origin = `https://sim-${++simulated}.example`;
  readonly pool = Array.from({ length: LOCS }, (_, i) => `${this.origin}/p/${i}`);
  readonly model = new Model();
  readonly mirror = new SimMirror(this.origin);
  readonly queue = new FlakyQueue();
  readonly dead: Sent[] = [];
  databases: number;
  #grown = false;
  #clock: number;
  #flippedAt: number | null = null;

  /** Whether the site mirrors a remote: programs with a `mirror-remote` command only. */
  readonly mirrored: boolean;

  constructor(databases: number, start: number, mirrored: boolean) {
    this.databases = databases;
    this.mirrored = mirrored;
    this.#clock = start;
  }

  env(): Env {
    return {
      ...baseEnv,
      SITES: this.origin,
      SITE_DATABASES: `${this.origin}=${DATABASES.slice(0, this.databases).join(",")}`,
      MAX_URLS_PER_SHARD: "10",
      INDEXNOW_ENDPOINT: "",
      PING_URLS: "",
      ...(this.mirrored ? this.mirror.vars() : {}),
      JOBS: this.queue as unknown as Queue,
    } as Env;
  }

  #advance(ms: number): void {
    this.#clock += ms;
    vi.setSystemTime(this.#clock);
  }

  async #admin(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await call(this.env(), `${this.origin}/sitemap-admin${path}`, {
      method,
      headers: { ...AUTH, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      json = { text };
    }
    return { status: res.status, json };
  }

  /** A write's outcome in the model: 200 stored, 4xx a clear refusal that wrote nothing, else unknown. */
  #written(status: number, locs: readonly string[], stored: (loc: string) => void): void {
    if (status === 200) for (const loc of locs) stored(loc);
    else if (status >= 500) for (const loc of locs) this.model.unknown(loc);
  }

  /** The seed: the first locs written and every job they queued run. */
  async start(): Promise<void> {
    vi.setSystemTime(this.#clock);
    this.mirror.serve();
    const locs = this.pool.slice(0, FIRST_LOCS);
    const res = await this.#admin(
      "PUT",
      "/urls",
      locs.map((loc) => ({ loc, lastmod: "2026-01-01" })),
    );
    if (res.status !== 200) throw new Error(`the seed was refused: ${res.status} ${JSON.stringify(res.json)}`);
    for (const loc of locs) this.model.put(loc, "2026-01-01");
    await this.settle("the seed");
  }

  async run(command: Command): Promise<void> {
    this.model.tick();
    this.#advance(1000);
    const m = this.model;
    switch (command.kind) {
      case "put": {
        const locs = command.locs.map((i) => this.pool[i]!);
        const lastmod = `2026-02-${String(command.day).padStart(2, "0")}`;
        vi.setSystemTime(this.#clock + command.skewSeconds * 1000);
        const res = await this.#admin(
          "PUT",
          "/urls",
          locs.map((loc) => ({ loc, lastmod })),
        );
        vi.setSystemTime(this.#clock);
        return this.#written(res.status, locs, (loc) => m.put(loc, lastmod));
      }
      case "delete": {
        const locs = command.locs.map((i) => this.pool[i]!);
        vi.setSystemTime(this.#clock + command.skewSeconds * 1000);
        const res = await this.#admin("DELETE", "/urls", locs);
        vi.setSystemTime(this.#clock);
        return this.#written(res.status, locs, (loc) => m.delete(loc));
      }
      case "sync-open": {
        const res = await this.#admin("POST", "/syncs", { sites: [this.origin] });
        if (res.status === 201) m.syncs.push({ id: res.json["id"] as string, openedAt: m.tick(), seen: new Set() });
        else if (res.status >= 500) throw new Violation(`POST /syncs answered ${res.status}: ${JSON.stringify(res.json)}`);
        m.tick();
        return;
      }
      case "sync-batch": {
        const sync = this.#sync(command.sync);
        if (!sync) return;
        const locs = command.locs.map((i) => this.pool[i]!);
        const lastmod = `2026-03-${String(command.day).padStart(2, "0")}`;
        const res = await this.#admin(
          "PUT",
          `/syncs/${sync.id}/urls`,
          locs.map((loc) => ({ loc, lastmod })),
        );
        return this.#written(res.status, locs, (loc) => {
          m.put(loc, lastmod);
          sync.seen.add(loc);
        });
      }
      case "sync-commit":
        return this.#commit(command.sync, command.maxDelete);
      case "sync-abort": {
        const sync = this.#sync(command.sync);
        if (!sync) return;
        const res = await this.#admin("DELETE", `/syncs/${sync.id}`);
        if (res.status < 500) m.close(sync);
        return;
      }
      case "heartbeat":
        return this.#heartbeat();
      case "deliver":
        return this.#deliverPicked(command.pick, command.how);
      case "send-fails":
        this.queue.failNext = true;
        return;
      case "grow":
        if (!this.#grown && this.databases < DATABASES.length) {
          this.databases++;
          this.#grown = true;
        }
        return;
      case "advance":
        return this.#advance(command.seconds * 1000);
      case "purge":
        this.#advance(PIN_GRACE_MS);
        return this.#heartbeat();
      case "mirror-remote":
        return this.mirror.publish(command.locs, `2026-04-${String(command.day).padStart(2, "0")}`);
    }
  }

  /** The open sync a command names: counted from the oldest, or from the newest when negative (NEWEST_SYNC). */
  #sync(pick: number): OpenSync | undefined {
    const syncs = this.model.syncs;
    return pick < 0 ? syncs.at(pick) : syncs[pick % Math.max(1, syncs.length)];
  }

  async #commit(pick: number, maxDelete: number): Promise<void> {
    const m = this.model;
    const sync = this.#sync(pick);
    if (!sync) return;
    const expected = m.wouldDelete(sync);
    const inScope = new Set([...m.live.keys(), ...m.uncertain]).size;
    for (let round = 0; round < 20; round++) {
      const res = await this.#admin("POST", `/syncs/${sync.id}/commit`, { maxDelete });
      if (res.status === 200 && res.json["done"] === true) {
        const deleted = res.json["deleted"];
        if (m.uncertain.size === 0 && deleted !== expected.length)
          throw new Violation(`sync commit deleted ${String(deleted)}, the model expected ${expected.length} (${expected.join(" ")})`);
        m.commit(sync);
        return;
      }
      // 202: committing, not done (a bounded number of chunks a request): the client calls again.
      if (res.status === 200 || res.status === 202) continue;
      if (res.status === 409 && res.json["error"] === "delete_guard") {
        const uncertain = m.uncertain.size > 0;
        if (!uncertain && expected.length <= maxDelete * inScope)
          throw new Violation(
            `the sync guard refused a commit the model allows: ${JSON.stringify(res.json)}; the model: would delete ${expected.length} of ${inScope} (maxDelete ${maxDelete})`,
          );
        return;
      }
      if (res.status >= 500) {
        for (const loc of expected) m.unknown(loc);
        m.close(sync);
        return;
      }
      if (res.json["error"] !== "empty_sync") m.close(sync);
      return;
    }
    throw new Violation(`sync commit not done after 20 calls`);
  }

  async #heartbeat(): Promise<void> {
    const ctx = createExecutionContext();
    try {
      await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), this.env(), ctx);
      await waitOnExecutionContext(ctx);
    } catch {
      // A heartbeat that fails (its queue send did) is allowed: the next one plans again. What it left must still converge.
    }
    await this.#afterInvocation();
  }

  async #deliverPicked(pick: number, how: "once" | "duplicated" | "delayed" | "killed"): Promise<void> {
    const due = this.queue.pending.filter((s) => s.dueAt <= this.#clock);
    const message = due[pick % Math.max(1, due.length)];
    if (!message) return;
    if (how === "delayed") {
      message.dueAt = this.#clock + 30_000;
      return;
    }
    this.queue.pending.splice(this.queue.pending.indexOf(message), 1);
    message.attempts++;
    if (how === "duplicated") {
      // At-least-once: the same message delivered twice at the same time, both acknowledged or retried.
      const copy = { ...message };
      await Promise.all([this.#deliver(message, this.env()), this.#deliver(copy, this.env())]);
    } else {
      await this.#deliver(message, how === "killed" ? killedAfter(this.env(), 1 + pick * 2) : this.env());
    }
    await this.#afterInvocation();
  }

  /** One delivery; a retried message goes back on the queue (its attempts counted), after the last retry to the dead letters. */
  async #deliver(message: Sent, env: Env): Promise<void> {
    const result = await deliver(env, message.body, message.attempts, undefined, message.id);
    const retried = result.retryBatch.retry || result.retryMessages.length > 0;
    if (!retried) return;
    if (message.attempts <= MAX_RETRIES) this.queue.pending.push({ ...message, dueAt: this.#clock });
    else this.dead.push(message);
  }

  async #layout(): Promise<Layout | null> {
    const row = await baseEnv.DB.prepare("SELECT settled, target, flipped_at FROM partition_layouts WHERE origin = ?1")
      .bind(this.origin)
      .first<{ settled: number; target: number; flipped_at: number | null }>();
    return row && { settled: row.settled, target: row.target, flippedAt: row.flipped_at };
  }

  /** Every loc the program writes: the admin commands' pool and the mirror's. */
  get #locs(): string[] {
    return [...this.pool, ...this.mirror.pool];
  }

  /** What the mirror's syncs did; after a flip, every loc as the admin API answers it. */
  async #afterInvocation(): Promise<void> {
    await this.mirror.observe(this.env(), this.model);
    const layout = await this.#layout();
    if (layout && layout.flippedAt !== this.#flippedAt) {
      this.#flippedAt = layout.flippedAt;
      await checkAdmin(this.env(), this.origin, this.#locs, this.model, `after the flip to ${layout.settled}`);
      await checkMarkers(
        DATABASES.map((name) => baseEnv[name]),
        this.origin,
        layout.settled,
        `after the flip to ${layout.settled}`,
      );
      // Right after every flip, before its catch-up: a full sync re-sending what is served (issue 49, defect 1).
      await syncServed(
        this.env(),
        this.origin,
        this.#locs,
        (method, path, body) => this.#admin(method, path, body),
        `the full sync after the flip to ${layout.settled}`,
      );
    }
  }

  /** Each of the site's jobs with its last outcome, in every database: what a chain that does not converge was doing. */
  async #outcomes(): Promise<string> {
    const lines: string[] = [];
    for (const name of DATABASES) {
      const rows = await baseEnv[name]
        .prepare("SELECT kind, outcome FROM jobs WHERE origin = ?1 OR origin = ?2 OR origin = ?1 || ' ' || ?2")
        .bind(this.origin, this.mirror.url)
        .all<{ kind: string; outcome: string | null }>();
      for (const r of rows.results) lines.push(`${name} ${r.kind}: ${r.outcome ?? "none"}`);
    }
    const mirror = await baseEnv.DB.prepare("SELECT error FROM mirrors WHERE url = ?1").bind(this.mirror.url).first<string | null>("error");
    if (mirror) lines.push(`the mirror's error: ${mirror}`);
    return lines.join("; ");
  }

  /** Every pending message delivered (the clock moved to when each is due), within `SETTLE_INVOCATIONS`. */
  async settle(where: string): Promise<number> {
    this.queue.failNext = false;
    let invocations = 0;
    const delivered = new Map<string, number>();
    for (;;) {
      this.queue.pending.sort((a, b) => a.dueAt - b.dueAt);
      const next = this.queue.pending.shift();
      if (!next) return invocations;
      const key = `${next.body.kind}${next.body.partition === undefined ? "" : ` partition ${next.body.partition}`} (${next.body.trigger})`;
      delivered.set(key, (delivered.get(key) ?? 0) + 1);
      if (++invocations > SETTLE_INVOCATIONS) {
        const most = [...delivered].sort((a, b) => b[1] - a[1]).slice(0, 4);
        throw new Violation(
          `${where}: more than ${SETTLE_INVOCATIONS} invocations to bring the jobs to rest (a chain does not converge): ${most.map(([k, n]) => `${n}× ${k}`).join(", ")}; the jobs' last outcomes: ${await this.#outcomes()}`,
        );
      }
      if (next.dueAt > this.#clock) this.#advance(next.dueAt - this.#clock);
      next.attempts++;
      await this.#deliver(next, this.env());
      await this.#afterInvocation();
    }
  }

  /** The end: syncs left open aborted, heartbeats until the move (if any) flipped and every job rests; then the checks. */
  async finish(): Promise<void> {
    for (const sync of [...this.model.syncs]) {
      await this.#admin("DELETE", `/syncs/${sync.id}`);
      this.model.close(sync as OpenSync);
    }
    // The remote once more under a new ETag: the end's first heartbeat makes a whole pass of it, so the mirror's locs end exact.
    this.mirror.republish();
    let invocations = await this.settle("the end");
    for (let round = 0; ; round++) {
      const layout = await this.#layout();
      const moving = layout !== null && layout.target > layout.settled;
      if (!moving && this.queue.pending.length === 0 && round > 0) break;
      if (round >= 4) throw new Violation(`the end: the move to ${layout?.target} databases did not finish in 4 heartbeats`);
      this.#advance(120_000);
      await this.#heartbeat();
      invocations += await this.settle("the end");
    }
    if (this.dead.length > 0) throw new Violation(`jobs went to the dead-letter queue: ${this.dead.map((d) => JSON.stringify(d.body)).join(" ")}`);
    await checkCrawl(this.env(), this.origin, this.#locs, this.model, `the end (${invocations} invocations to rest)`);
    await checkAdmin(this.env(), this.origin, this.#locs, this.model, "the end");
    // A day on: the rows a move left behind are purged, and nothing served changes.
    this.#advance(PIN_GRACE_MS + 60_000);
    await this.#heartbeat();
    await this.settle("the purge");
    if (this.queue.pending.length > 0) throw new Violation("the purge: jobs still pending");
    await checkCrawl(this.env(), this.origin, this.#locs, this.model, "after the purge");
    const layout = await this.#layout();
    if (layout)
      await checkMarkers(
        DATABASES.map((name) => baseEnv[name]),
        this.origin,
        layout.settled,
        "after the purge",
      );
  }
}

/** One program, start to end; throws the first violation. */
export async function runProgram(program: Program, start = Date.now()): Promise<void> {
  vi.useFakeTimers({ toFake: ["Date"] });
  const sim = new Simulation(
    program.databases,
    start,
    program.commands.some((c) => c.kind === "mirror-remote"),
  );
  try {
    await sim.start();
    for (const [i, command] of program.commands.entries()) {
      try {
        await sim.run(command);
      } catch (err) {
        if (err instanceof Violation) err.message = `at command ${i} (${command.kind}): ${err.message}`;
        throw err;
      }
    }
    await sim.finish();
  } finally {
    vi.useRealTimers();
    sim.mirror.stop();
  }
}
