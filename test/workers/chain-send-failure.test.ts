/**
 * A chain's next message that fails to send (issue 49, jobs): the step that sent it fails and is
 * retried by the queue, and the retry runs the step again and sends the message then, so the
 * chain goes on at once instead of stalling until the lost-chain rule (CHAIN_LOST_MS). Each row
 * of the table fails a different send of the chain: the continuation of each step, once or twice.
 */
import { createExecutionContext, createScheduledController } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import worker from "../../src/index.ts";
import type { Job } from "../../src/jobs/messages.ts";
import { listed, manifestOf, newSite, write } from "./regen-support.ts";
import { drain, withJobs } from "./support/jobs.ts";
import { call } from "./support.ts";

const ADMIN = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const PAST = Date.UTC(2026, 0, 1);

afterEach(() => {
  vi.restoreAllMocks();
});

/** Which sends of the regeneration's chain fail: the `continue` message to step `step`, `times` times in a row. */
const CASES = [
  { step: 1, times: 1 },
  { step: 1, times: 2 },
  { step: 2, times: 1 },
];

describe("a chain whose next message fails to send", () => {
  for (const { step, times } of CASES) {
    it(`goes on with the retry of the step that sent it (the send to step ${step} failing ${times}×) and ends idle, converged`, async () => {
      vi.spyOn(console, "log").mockImplementation(() => undefined);
      vi.spyOn(console, "error").mockImplementation(() => undefined);
      // 120 shards of 100 URLs, 50 shards a step: three steps.
      const site = newSite(`chain-send-${step}-${times}`, { MAX_URLS_PER_SHARD: "100" });
      await write(site, demoSection(site.origin, "pages", 12_000), PAST);
      const { env: e, queue } = withJobs(site.env);
      const send = queue.send.bind(queue);
      let failing = times;
      queue.send = async (body: Job, options?: { delaySeconds?: number }) => {
        if (body.kind === "regenerate" && body.trigger === "continue" && body.step === step && failing > 0) {
          failing--;
          throw new Error("Queue send failed: injected");
        }
        return send(body, options);
      };
      await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), e, createExecutionContext());
      const deliveries = (await drain(e, queue, { early: true })).filter((d) => d.job.kind === "regenerate");
      expect(failing).toBe(0);
      expect(deliveries.filter((d) => d.result === "retried")).toHaveLength(times);
      expect(deliveries.every((d) => d.result !== "dead")).toBe(true);

      const status = (await (await call(site.env, `${site.origin}/sitemap-admin/status`, { headers: ADMIN })).json()) as {
        jobs: { kind: string; state: string; outcome: string | null; error: string | null }[];
      };
      expect(status.jobs.find((j) => j.kind === "regenerate")).toMatchObject({ state: "idle", outcome: "converged", error: null });
      const manifest = await manifestOf(site);
      expect(listed(manifest)).toHaveLength(120);
      expect(listed(manifest).every((s) => s.snapshot)).toBe(true);
    });
  }
});
