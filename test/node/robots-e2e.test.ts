/**
 * robots.txt end to end: the real Worker (wrangler's test harness: workerd, local KV and Cache)
 * with ROBOTS_MAX_AGE=0, in front of real node:http origin servers on two loopback hosts
 * (127.0.0.1 the site, 127.0.0.2 its `www`). Whatever the origin does, the answer is never a 200
 * without the origin's Disallow rules (issue 28, RFC 9309).
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorker, startWorker } from "./support/worker.ts";

const SITE = "https://shop.example";
const FRESH = "https://fresh.example";
const RULES = "User-agent: *\nDisallow: /private/\n";

/** What the site's origin does next: the test sets it before each request. */
let mode: "200" | "503" | "big" | "redirect" = "200";
let apex: Server;
let www: Server;
let wwwBase: string;
let worker: RunningWorker;

/** A generated robots.txt of 756 KB: `User-agent: *` and numbered Disallow lines of 34 bytes. */
const big = Buffer.from(
  ["User-agent: *\n", ...Array.from({ length: 22_240 }, (_, i) => `Disallow: /generated/path-${String(i).padStart(6, "0")}/\n`)].join(""),
);

function listen(server: Server, host: string): Promise<string> {
  return new Promise((resolve) => server.listen(0, host, () => resolve(`http://${host}:${(server.address() as AddressInfo).port}`)));
}

beforeAll(async () => {
  apex = createServer((req, res) => {
    if (mode === "503") return void res.writeHead(503, { "Retry-After": "120" }).end("deploying");
    if (mode === "redirect") return void res.writeHead(301, { Location: `${wwwBase}${req.url}` }).end();
    if (mode === "big") return void res.writeHead(200, { "Content-Type": "text/plain" }).end(big);
    res.writeHead(200, { "Content-Type": "text/plain" }).end(RULES);
  });
  www = createServer((_req, res) => res.writeHead(200, { "Content-Type": "text/plain" }).end(`${RULES}Disallow: /www-only/\n`));
  const apexBase = await listen(apex, "127.0.0.1");
  wwwBase = await listen(www, "127.0.0.2");
  worker = await startWorker({ SITES: `${SITE} ${FRESH}`, ROBOTS_ORIGIN_URL: `${apexBase}/{host}/robots.txt`, ROBOTS_MAX_AGE: "0", FEED_SIZE: "0" });
});

afterAll(async () => {
  await worker?.close();
  apex?.close();
  www?.close();
});

const robots = (site: string) => worker.harness.getWorker().fetch(`${site}/robots.txt`);

describe("robots.txt in front of a real origin", () => {
  it("200: the origin's file and the Sitemap: line", async () => {
    mode = "200";
    const res = await robots(SITE);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.text()).toBe(`${RULES}\nSitemap: ${SITE}/sitemap.xml\n`);
  });

  it("503 without a last good copy: 503 with Retry-After, never an allow-all 200", async () => {
    mode = "503";
    const res = await robots(FRESH);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("60");
    expect(await res.text()).not.toMatch(/^Disallow:\s*$/m);
  });

  it("503 after a good answer: the last good copy, its rules and its age", async () => {
    mode = "503";
    // The copy is written in waitUntil after the first test's answer: give it a moment to land.
    let res = await robots(SITE);
    for (let i = 0; i < 50 && res.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await robots(SITE);
    }
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`${RULES}\nSitemap: ${SITE}/sitemap.xml\n`);
    expect(res.headers.get("x-robots-origin")).toBe("origin answered 503; serving the last good copy");
    expect(Number(res.headers.get("x-robots-origin-age"))).toBeGreaterThanOrEqual(0);
  });

  it("756 KB: its first 500 KiB cut at a line end, then the Sitemap: line (how much is read: test/workers/robots.test.ts)", async () => {
    mode = "big";
    const res = await robots(SITE);
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    const cut = big.subarray(0, 512_000).lastIndexOf(0x0a) + 1;
    expect(body.subarray(0, cut).equals(big.subarray(0, cut))).toBe(true);
    expect(body.subarray(cut).toString()).toBe(`\nSitemap: ${SITE}/sitemap.xml\n`);
  });

  it("a redirect to another host: the rules found there", async () => {
    mode = "redirect";
    const res = await robots(SITE);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`${RULES}Disallow: /www-only/\n\nSitemap: ${SITE}/sitemap.xml\n`);
  });
});
