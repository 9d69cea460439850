/** `npm run check-config`: the deployer's check of wrangler.jsonc + secrets, before deploying. */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { ConfigSources } from "../../scripts/local-config.ts";
import { databaseListProblems, recordDeployedLists } from "../../scripts/partitions-lock.ts";

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

describe("npm run check-config: a partitioned site's database list against the one deployed last (partitions.lock.json)", () => {
  const SITE = "https://big.example";
  const declared = (ids: Record<string, string>) =>
    Object.entries(ids).map(([binding, id]) => ({ binding, database_name: `sitemaps-${binding.toLowerCase()}`, database_id: id }));
  const IDS = { DB: "id-1", DB_2: "id-2", DB_3: "id-3", DB_4: "id-4" };
  let projects = 0;

  /** A deployer's project: wrangler.jsonc with these D1 databases and the site's list; the lock stays beside it between calls. */
  function project() {
    const root = join(dir, `project-${++projects}`);
    mkdirSync(root);
    const configPath = join(root, "wrangler.jsonc");
    const sources: ConfigSources = { configPath, devVarsPath: null, processEnv: {} };
    const write = (list: string, ids: Record<string, string> = IDS) =>
      writeFileSync(
        configPath,
        JSON.stringify({
          name: "sitemaps",
          main: "src/index.ts",
          compatibility_date: "2026-11-01",
          d1_databases: declared(ids),
          vars: { SITES: SITE, SITE_DATABASES: `${SITE}=${list}` },
        }),
      );
    return { root, configPath, sources, write };
  }

  it("passes without a record, and a list with databases appended or a binding renamed; refuses one reordered, repointed or dropped", () => {
    const p = project();
    p.write("DB,DB_2,DB_3");
    expect(databaseListProblems(p.sources)).toEqual([]);
    // What `npm run deploy` does once the deploy and the migrations succeeded.
    expect(recordDeployedLists(p.sources)).toBe(join(p.root, "partitions.lock.json"));
    expect(JSON.parse(readFileSync(join(p.root, "partitions.lock.json"), "utf8"))).toEqual({
      workers: { sitemaps: { [SITE]: declared({ DB: "id-1", DB_2: "id-2", DB_3: "id-3" }) } },
    });

    p.write("DB,DB_2,DB_3,DB_4");
    expect(databaseListProblems(p.sources)).toEqual([]);
    p.write("DB,BIG_2,DB_3", { DB: "id-1", BIG_2: "id-2", DB_3: "id-3" });
    expect(databaseListProblems(p.sources)).toEqual([]);

    p.write("DB,DB_3,DB_2,DB_4");
    expect(databaseListProblems(p.sources)).toEqual([
      "configuration error: SITE_DATABASES for https://big.example lists DB_3 second, but the database recorded second is DB_2's (id-2), listed third: the list was reordered; restore the order DB,DB_2,DB_3,DB_4 (append new databases at the end) (the list deployed last is in partitions.lock.json)",
    ]);
    p.write("DB,DB_2,DB_3", { ...IDS, DB_2: "id-9" });
    expect(databaseListProblems(p.sources)[0]).toContain(
      "lists DB_2, but DB_2 is now another database (id-9) than the one recorded as the site's second partition (id-2)",
    );
    for (const dropped of ["DB,DB_2", "DB"]) {
      p.write(dropped);
      expect(databaseListProblems(p.sources)[0]).toContain("no longer lists the database recorded as the site's");
    }
  });

  it("records a one-database site too: relisted with its database not first, or not at all, it is refused (generated lists, reference rule)", () => {
    const names = ["DB", "DB_2", "DB_3", "DB_4"];
    const lists = fc
      .shuffledSubarray(names, { minLength: 1, maxLength: 4 })
      .chain((l) => fc.shuffledSubarray(l, { minLength: l.length, maxLength: l.length }));
    fc.assert(
      fc.property(fc.boolean(), lists, (unlisted, list) => {
        const p = project();
        // Deployed with the site in DB: unlisted (DB is an unlisted site's database), or listed as DB alone.
        p.write("DB");
        if (unlisted) {
          const config = JSON.parse(readFileSync(p.configPath, "utf8")) as { vars: Record<string, string> };
          writeFileSync(p.configPath, JSON.stringify({ ...config, vars: { ...config.vars, SITE_DATABASES: "" } }));
        }
        expect(recordDeployedLists(p.sources)).toBe(join(p.root, "partitions.lock.json"));
        p.write(list.join(","));
        const problems = databaseListProblems(p.sources);
        // The reference rule: the database the site lived in stays first.
        if (list[0] === "DB") expect(problems).toEqual([]);
        else {
          expect(problems).toHaveLength(1);
          expect(problems[0]).toMatch(/^configuration error: SITE_DATABASES for https:\/\/big\.example /);
        }
      }),
      {
        numRuns: 40,
        seed: 4905,
        examples: [
          [false, ["DB_2", "DB"]],
          [true, ["DB_2", "DB_3"]],
          [false, ["DB_2"]],
        ],
      },
    );
  });

  it("exits 1 naming SITE_DATABASES for a reordered list, before anything is deployed; 0 for an appended one", () => {
    const p = project();
    p.write("DB,DB_2,DB_3");
    recordDeployedLists(p.sources);
    const run = () =>
      spawnSync(process.execPath, ["scripts/check-config.ts", "--config", p.configPath, "--no-dev-vars"], {
        env: { PATH: process.env["PATH"] ?? "" },
        encoding: "utf8",
      });
    p.write("DB,DB_3,DB_2");
    const reordered = run();
    expect(reordered.status).toBe(1);
    expect(reordered.stderr).toContain("configuration error: SITE_DATABASES for https://big.example lists DB_3 second");
    expect(reordered.stderr).toContain("1 configuration problem");
    p.write("DB,DB_2,DB_3,DB_4");
    const appended = run();
    expect(appended.status, appended.stderr).toBe(0);
    expect(appended.stdout).toContain("configuration ok");
  });
});
