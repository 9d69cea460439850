/**
 * `npm run simulate -- [--runs N] [--seed S] [--without KIND[,KIND…]] [--length N]`: runs the
 * simulation of issue 49 (test/workers/simulation.test.ts, test/workers/sim/) with more programs than
 * CI does, in the vitest workers pool (real D1, KV, Queues consumer, Cache). A failure is shrunk and
 * printed as its program, one command a line; the same `--seed` replays it. `--without` switches
 * command kinds off for diagnosis (put, delete, skewed-write, lagging-write, write-in-sync, sync-open, sync-batch,
 * sync-commit, sync-abort, heartbeat, deliver, send-fails, grow, advance, purge, mirror-remote).
 */
import { spawnSync } from "node:child_process";

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const number = (name: string): number | undefined => {
  const value = flag(name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`${name} takes a whole number, not ${JSON.stringify(value)}`);
    process.exit(2);
  }
  return n;
};

const config = {
  runs: number("--runs") ?? 50,
  seed: number("--seed") ?? Math.floor(Math.random() * 2 ** 31),
  length: number("--length") ?? 40,
  without: (flag("--without") ?? "").split(",").filter(Boolean),
};
console.log(`simulate: ${config.runs} programs, seed ${config.seed}${config.without.length ? `, without ${config.without.join(", ")}` : ""}`);
const result = spawnSync("npx", ["vitest", "run", "--project", "workers", "test/workers/simulation.test.ts"], {
  stdio: "inherit",
  env: { ...process.env, SIM_CONFIG: JSON.stringify(config) },
});
process.exit(result.status ?? 1);
