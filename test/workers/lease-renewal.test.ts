/**
 * A step's lease is renewed while it runs (src/jobs/consumer.ts, LEASE_RENEW_MS): a step that runs
 * past JOB_LEASE_MS keeps its lease, so a duplicate delivery of its message then is a no-op
 * instead of running the step a second time beside it (issue 51.6).
 */
import { createExecutionContext, createMessageBatch } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { JOBS, servicesOfJob } from "../../src/job-dispatch.ts";
import { JOB_LEASE_MS } from "../../src/jobs/budget.ts";
import { consumeJobs } from "../../src/jobs/consumer.ts";
import type { Job } from "../../src/jobs/messages.ts";
import { Meter } from "../../src/jobs/meter.ts";
import { registeredSites, services } from "../../src/services.ts";
import { newSite } from "./regen-support.ts";
import { withJobs } from "./support/jobs.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a step that runs longer than its lease", () => {
  it("keeps it by renewing it: a duplicate delivered after the first lease would have ended runs nothing", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const site = newSite("lease-renew");
    const { env: e, queue } = withJobs(site.env);
    expect(await services(e).jobs!.request("gsc-status", site.origin, 0, "test")).toBe(true);
    const body = queue.sent[0]!.body as Job;

    let runs = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const handlers = {
      ...JOBS,
      "gsc-status": async () => {
        runs++;
        await gate;
        return "done";
      },
    };
    const deliver = (id: string) =>
      consumeJobs(createMessageBatch("edge-sitemaps-jobs", [{ id, timestamp: new Date(), attempts: 1, body }]), e, createExecutionContext(), {
        handlers,
        servicesOf: servicesOfJob,
        sites: registeredSites,
        meter: new Meter(),
        renewEveryMs: 20,
      });
    const leaseUntil = async () =>
      (await site.env.DB.prepare("SELECT lease_until FROM jobs WHERE kind = 'gsc-status' AND origin = ?1")
        .bind(site.origin)
        .first<number>("lease_until"))!;

    const t0 = Date.now();
    const first = deliver("first");
    while (runs === 0) await sleep(5);
    const firstLease = await leaseUntil();
    expect(firstLease).toBeLessThanOrEqual(Date.now() + JOB_LEASE_MS);

    // Two and a half minutes into the step: its renewal moves the lease on from then.
    vi.spyOn(Date, "now").mockReturnValue(t0 + 150_000);
    for (let i = 0; i < 100 && (await leaseUntil()) < t0 + 150_000 + JOB_LEASE_MS; i++) await sleep(10);
    // Past where the first lease ended: a duplicate of the message arrives.
    vi.spyOn(Date, "now").mockReturnValue(t0 + JOB_LEASE_MS + 60_000);
    const duplicate = deliver("duplicate");
    // A no-op ends at once; a rerun would wait at the gate with the first.
    await Promise.race([duplicate, sleep(1_000)]);
    expect(runs).toBe(1);

    release();
    await Promise.all([first, duplicate]);
    expect(runs).toBe(1);
  });
});
