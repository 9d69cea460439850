/** `npm run check-config`: the deployer's check of wrangler.jsonc + secrets, before deploying. */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "check-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function check(vars: Record<string, string>, secrets: Record<string, string> = {}) {
  const config = join(dir, `wrangler-${Math.random().toString(36).slice(2)}.jsonc`);
  writeFileSync(
    config,
    `{ // a deployer's file\n "name": "x", "main": "src/index.ts", "compatibility_date": "2026-11-01",\n "vars": ${JSON.stringify(vars)} }\n`,
  );
  // A clean environment: nothing of this machine's own variables or .dev.vars reaches the check.
  const result = spawnSync(process.execPath, ["scripts/check-config.ts", "--config", config, "--no-dev-vars"], {
    env: { PATH: process.env["PATH"] ?? "", ...secrets },
    encoding: "utf8",
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

describe("npm run check-config", () => {
  it("passes a good configuration", () => {
    const { code, out } = check({ SITES: "https://example.com" });
    expect(code).toBe(0);
    expect(out).toContain("configuration ok");
  });

  it("names every bad variable and its rule, never the value, and exits 1", () => {
    const { code, err } = check({ SITES: "https://example.com", PING_URLS: "https://ping.example/secret-path" }, { INDEXNOW_KEY: "short" });
    expect(code).toBe(1);
    expect(err).toContain('configuration error: INDEXNOW_KEY must be 8 to 128 characters of a-z, A-Z, 0-9 and "-"');
    expect(err).toContain("configuration error: PING_URLS must list http(s) URL templates");
    expect(err).toContain("2 configuration problems");
    expect(err).not.toMatch(/short"|secret-path/);
  });

  it("names a bad core variable and the cross-variable rule of snapshot grace", () => {
    const core = check({ SITES: "example.com" });
    expect(core.code).toBe(1);
    expect(core.err).toContain("configuration error: SITES must list http(s) origins");
    const grace = check({ SITES: "https://example.com", SNAPSHOT_GRACE_SECONDS: "10", MANIFEST_CACHE_TTL: "60" });
    expect(grace.code).toBe(1);
    expect(grace.err).toContain("configuration error: SNAPSHOT_GRACE_SECONDS must be at least MANIFEST_CACHE_TTL");
  });

  it("takes Cloudflare Access only from https://<team>.cloudflareaccess.com; a local stand-in never passes", () => {
    const site = { SITES: "https://example.com", ACCESS_AUD: "aud0123456789abcdef" };
    // Every spawn loads wrangler (~5 s): the rule's other cases are in test/workers/config.test.ts.
    for (const domain of ["http://team.example.com", "https://team.cloudflareaccess.com.evil.example"]) {
      const bad = check({ ...site, ACCESS_TEAM_DOMAIN: domain });
      expect(bad.code, domain).toBe(1);
      expect(bad.err).toContain('configuration error: ACCESS_TEAM_DOMAIN must be the Access team domain, "https://<team>.cloudflareaccess.com"');
      expect(bad.err).not.toContain(domain);
    }
    expect(check({ ...site, ACCESS_TEAM_DOMAIN: "https://team.cloudflareaccess.com" }).code).toBe(0);
    const standIn = check({ ...site, ACCESS_TEAM_DOMAIN: "team.cloudflareaccess.com", ACCESS_TEST_ISSUER: "http://127.0.0.1:18540" });
    expect(standIn.code).toBe(1);
    expect(standIn.err).toContain("configuration error: ACCESS_TEST_ISSUER is for local tests only");
  });
});
