import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { boundDatabases } from "../../src/services.ts";

// Storage is isolated per test file; migrations are idempotent (tracked in d1_migrations).
// Every bound D1 database, as `npm run deploy` migrates each: the registry's purge and sweep walk them all.
for (const name of boundDatabases(env as Env)) await applyD1Migrations((env as unknown as Record<string, D1Database>)[name]!, env.TEST_MIGRATIONS);
