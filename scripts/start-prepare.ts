/**
 * `npm start`'s preparation (D1 migrations, then the demo seed), run by scripts/start.ts as a child
 * process. What wrangler and workerd print meanwhile (the migration tables; the platform proxy's
 * warnings that the KV_WRITERS Durable Object "will not work in local development" and is "not
 * exported": the seeding never uses it, the Worker under `wrangler dev` does) is its stdout and
 * stderr, which npm start shows only when this fails or with `--verbose`. Each step's result goes
 * to the parent over the IPC channel.
 *
 * Argument: JSON `{ origin, vars, state, demoSites? }` (see PrepareRequest).
 */
import { DatabaseListError } from "../src/store/errors.ts";
import {
  type DemoSitesResult,
  type LocalState,
  type MigrationsApplied,
  type SeedResult,
  applyMigrations,
  registerDemoSites,
  seedIfEmpty,
} from "./local-db.ts";

export interface PrepareRequest {
  origin: string;
  vars: Record<string, string>;
  state: LocalState;
  /** `--demo-sites N`: registered demo sites on the port of `origin`. */
  demoSites?: number;
}

export type PrepareMessage =
  | { step: "migrations"; databases: MigrationsApplied[] }
  | { step: "seed"; seed: SeedResult; ms: number }
  | { step: "demo-sites"; sites: DemoSitesResult; ms: number }
  /** The site's SITE_DATABASES list does not match its databases (docs/capacity.md "The database list is checked"): nothing is served until it does. */
  | { step: "refused"; reason: string };

const send = (message: PrepareMessage): Promise<void> =>
  new Promise((resolve, reject) => {
    if (!process.send) return reject(new Error("scripts/start-prepare.ts is run by npm start (it reports over IPC)"));
    process.send(message, undefined, {}, (error) => (error ? reject(error) : resolve()));
  });

const request = JSON.parse(process.argv[2] ?? "null") as PrepareRequest | null;
if (!request) throw new Error('usage: node scripts/start-prepare.ts \'{"origin":…,"vars":…,"state":…}\'');

await send({ step: "migrations", databases: applyMigrations(request.state.persistTo) });
const started = Date.now();
try {
  const seed = await seedIfEmpty(request.origin, { vars: request.vars, ...request.state });
  await send({ step: "seed", seed, ms: Date.now() - started });
  if (request.demoSites) {
    const at = Date.now();
    const sites = await registerDemoSites(Number(new URL(request.origin).port), request.demoSites, { vars: request.vars, ...request.state });
    await send({ step: "demo-sites", sites, ms: Date.now() - at });
  }
} catch (err) {
  if (!(err instanceof DatabaseListError)) throw err;
  await send({ step: "refused", reason: err.message });
  process.exitCode = 2;
}
process.disconnect?.();
