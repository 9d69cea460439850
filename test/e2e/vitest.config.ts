import { defineConfig } from "vitest/config";

// Tests never reach the internet: without this, Miniflare fetches Request.cf from
// workers.cloudflare.com at startup (and only falls back when offline). Child processes inherit it.
process.env["CLOUDFLARE_CF_FETCH_ENABLED"] = "false";

// End to end: the real Worker under `wrangler dev`, driven from Node like a crawler, a site owner
// and a bad day would. One file at a time: each starts its own server on a free loopback port.
export default defineConfig({
  test: {
    name: "e2e",
    root: new URL("../..", import.meta.url).pathname,
    include: ["test/e2e/**/*.e2e.test.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 240_000,
    reporters: ["default"],
    globalSetup: ["test/e2e/global-setup.ts"],
  },
});
