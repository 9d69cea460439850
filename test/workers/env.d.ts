import type { D1Migration } from "@cloudflare/vitest-plugin";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      ADMIN_TOKEN?: string;
      /** A second D1 database (vitest.config.ts), for SITE_DATABASES. */
      SITE_B_DB: D1Database;
      /** More D1 databases (vitest.config.ts), for one site over several (partitions). */
      PART_B: D1Database;
      PART_C: D1Database;
      PART_D: D1Database;
      /** `npm run simulate`'s options as JSON (scripts/simulate.ts); empty in CI. */
      SIM_CONFIG: string;
      /** The mirror chain test's number of sitemaps (test/workers/mirror-scale.test.ts); empty in CI: 1,000. */
      MIRROR_SCALE_CHILDREN: string;
    }
  }
}
