/** Files that belong to one `npm run test:e2e` run (E2E_RUN_ID, set by the global setup). */
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Prefix of the seeded-storage templates of one run (support/dev-server.ts); the global teardown removes them. */
export function templatePrefix(runId: string): string {
  return join(tmpdir(), `edge-sitemaps-e2e-template-${runId}-`);
}
