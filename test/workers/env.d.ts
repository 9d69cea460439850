import type { D1Migration } from "@cloudflare/vitest-plugin";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      ADMIN_TOKEN?: string;
      /** A second D1 database (vitest.config.ts), for SITE_DATABASES. */
      SITE_B_DB: D1Database;
    }
  }
}
