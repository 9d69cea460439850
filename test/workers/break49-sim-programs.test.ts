/**
 * Attack on issue 49, Deliver 8 (the simulation): programs of the simulation's own commands, run by
 * its own runner and checked against its own model (test/workers/sim/), that its fixed CI seeds
 * (simulation.test.ts: 4 seeds × 30 programs) never generated. Each fails on main.
 *
 * 1. A sync opened, one loc sent to it, then a PUT of another loc by a writer 5 s behind (the
 *    simulation's "skewed-write"), then the commit: the implementation deletes the PUT's loc too
 *    (src/adapters/d1/sync.ts: "written since the sync started" is `updated_at < started_at`, a
 *    stamp); the model does not ("sync commit deleted 24, the model expected 23").
 *
 * Control: the same program with the writer's clock in step keeps the model.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { Command } from "./sim/commands.ts";
import { runProgram } from "./sim/runner.ts";

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

const syncAroundAPut = (skewSeconds: number): Command[] => [
  { kind: "sync-open" },
  { kind: "sync-batch", sync: 0, locs: [0], day: 3 },
  { kind: "put", locs: [40], day: 4, skewSeconds },
  { kind: "sync-commit", sync: 0, maxDelete: 1 },
];

describe("simulation programs the fixed seeds miss (issue 49 Deliver 8)", () => {
  for (const databases of [1, 2]) {
    it(`broken (${databases} database(s)): a PUT stamped 5 s behind, acknowledged after a sync opened, is deleted by its commit`, async () => {
      vi.spyOn(console, "log").mockImplementation(() => undefined);
      vi.spyOn(console, "error").mockImplementation(() => undefined);
      await expect(runProgram({ databases, commands: syncAroundAPut(-5) })).resolves.toBeUndefined();
    });

    it(`control (${databases} database(s)): the writer's clock in step keeps the model`, async () => {
      vi.spyOn(console, "log").mockImplementation(() => undefined);
      vi.spyOn(console, "error").mockImplementation(() => undefined);
      await expect(runProgram({ databases, commands: syncAroundAPut(0) })).resolves.toBeUndefined();
    });
  }
});
