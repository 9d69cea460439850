/**
 * robots.txt end to end: the real Worker (wrangler's test harness: workerd, local KV and Cache)
 * with ROBOTS_MAX_AGE=0, in front of real node:http origin servers on two loopback hosts
 * (127.0.0.1 the sites, 127.0.0.2 a `www`). Never fewer rules than the origin's own answer (issues
 * 28 and 34, RFC 9309): rules sent as text/html are kept, a 5xx or 429 is passed on, a 403 is never
 * a 200 without the rules, a 404 gives the minimal file, a loop back into the Worker is shown in
 * status, and every request the origins see names the product in its User-Agent.
 */
import { readFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorker, startWorker } from "./support/worker.ts";

const SITE = "https://shop.example";
const FRESH = "https://fresh.example";
const LOOP = "https://loop.example";
const RULES = "User-agent: *\nDisallow: /private/\n";
const TOKEN = "robots-e2e-admin-token-0123456789abcdef";
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

type Mode = "200" | "html-rules" | "html-page" | "404" | "403" | "429" | "503" | "big" | "redirect" | "to-worker";
/** What each site's origin does next (by the host in the path): the test sets it before each request. */
const modes = new Map<string, Mode>();
/** The User-Agent of every request the origin servers saw. */
const agents: (string | undefined)[] = [];
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
    agents.push(req.headers["user-agent"]);
    const plain = { "Content-Type": "text/plain" };
    switch (modes.get(req.url?.split("/")[1] ?? "") ?? "200") {
      case "html-rules": // Express's res.send(string), Django's HttpResponse, PHP: rules labelled text/html
        return void res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(RULES);
      case "html-page":
        return void res.writeHead(200, { "Content-Type": "text/html" }).end("<!DOCTYPE html>\n<html><body>Page not found</body></html>");
      case "404":
        return void res.writeHead(404, plain).end("not found");
      case "403": // a WAF rule
        return void res.writeHead(403, { "Content-Type": "text/html" }).end("<html>Access denied</html>");
      case "429":
        return void res.writeHead(429, { "Retry-After": "30" }).end("slow down");
      case "503":
        return void res.writeHead(503, { "Retry-After": "120" }).end("deploying");
      case "big":
        return void res.writeHead(200, plain).end(big);
      case "redirect":
        return void res.writeHead(301, { Location: `${wwwBase}${req.url}` }).end();
      case "to-worker": // the origin sends the crawler to a host this very Worker serves
        return void res.writeHead(302, { Location: `${worker.origin}/robots.txt` }).end();
      default:
        return void res.writeHead(200, plain).end(RULES);
    }
  });
  www = createServer((req, res) => {
    agents.push(req.headers["user-agent"]);
    res.writeHead(200, { "Content-Type": "text/plain" }).end(`${RULES}Disallow: /www-only/\n`);
  });
  const apexBase = await listen(apex, "127.0.0.1");
  wwwBase = await listen(www, "127.0.0.2");
  worker = await startWorker(
    { SITES: `${SITE} ${FRESH} ${LOOP}`, ROBOTS_ORIGIN_URL: `${apexBase}/{host}/robots.txt`, ROBOTS_MAX_AGE: "0", FEED_SIZE: "0" },
    { secrets: { ADMIN_TOKEN: TOKEN } },
  );
});

afterAll(async () => {
  await worker?.close();
  apex?.close();
  www?.close();
});

const robots = (site: string) => worker.harness.getWorker().fetch(`${site}/robots.txt`);
const minimal = (site: string) => `User-agent: *\nDisallow:\n\nSitemap: ${site}/sitemap.xml\n`;

/** Asks until the answer is a 200: the last good copy is written in waitUntil after a good answer. */
async function untilOk(site: string): ReturnType<typeof robots> {
  let res = await robots(site);
  for (let i = 0; i < 50 && res.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 100));
    res = await robots(site);
  }
  return res;
}

describe("robots.txt in front of a real origin", () => {
  it("200: the origin's file and the Sitemap: line", async () => {
    modes.set("shop.example", "200");
    const res = await robots(SITE);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.text()).toBe(`${RULES}\nSitemap: ${SITE}/sitemap.xml\n`);
  });

  it("rules sent as text/html: kept byte for byte", async () => {
    modes.set("fresh.example", "html-rules");
    const res = await robots(FRESH);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`${RULES}\nSitemap: ${FRESH}/sitemap.xml\n`);
  });

  it("an HTML page (a soft 404), and a 404: the minimal file with the Sitemap: line", async () => {
    for (const mode of ["html-page", "404"] as const) {
      modes.set("fresh.example", mode);
      const res = await robots(FRESH);
      expect(res.status, mode).toBe(200);
      expect(await res.text()).toBe(minimal(FRESH));
    }
  });

  it("403 without a last good copy: 503 with Retry-After, never an allow-all 200", async () => {
    modes.set("loop.example", "403");
    const res = await robots(LOOP);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("60");
    expect(await res.text()).not.toMatch(/^Disallow:\s*$/m);
  });

  it("403 after a good answer: the last good copy, its rules and its age", async () => {
    modes.set("shop.example", "403");
    const res = await untilOk(SITE);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`${RULES}\nSitemap: ${SITE}/sitemap.xml\n`);
    expect(res.headers.get("x-robots-origin")).toBe("origin answered 403 to our fetch; serving the last good copy");
    expect(Number(res.headers.get("x-robots-origin-age"))).toBeGreaterThanOrEqual(0);
  });

  it("503 and 429: passed on with their Retry-After, even though a last good copy exists", async () => {
    for (const [mode, retryAfter] of [
      ["503", "120"],
      ["429", "30"],
    ] as const) {
      modes.set("shop.example", mode);
      const res = await robots(SITE);
      expect(res.status).toBe(Number(mode));
      expect(res.headers.get("retry-after")).toBe(retryAfter);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(await res.text()).not.toContain("Disallow");
    }
  });

  it("756 KB: its first 500 KiB cut at a line end, then the Sitemap: line (how much is read: test/workers/robots-file.test.ts)", async () => {
    modes.set("shop.example", "big");
    const res = await robots(SITE);
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    const cut = big.subarray(0, 512_000).lastIndexOf(0x0a) + 1;
    expect(body.subarray(0, cut).equals(big.subarray(0, cut))).toBe(true);
    expect(body.subarray(cut).toString()).toBe(`\nSitemap: ${SITE}/sitemap.xml\n`);
  });

  it("a redirect to another host: the rules found there", async () => {
    modes.set("shop.example", "redirect");
    const res = await robots(SITE);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`${RULES}Disallow: /www-only/\n\nSitemap: ${SITE}/sitemap.xml\n`);
  });

  it("a redirect back into the Worker: 503 (not 'no file'), and status shows the loop", async () => {
    modes.set("loop.example", "to-worker");
    const res = await robots(LOOP);
    expect(res.status).toBe(503);
    expect(res.headers.get("x-robots-origin")).toMatch(/loop/);
    const status = async () =>
      (
        (await (await worker.harness.getWorker().fetch(`${LOOP}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()) as {
          robots: { loop: string; problem: string | null };
        }
      ).robots;
    let shown = await status();
    for (let i = 0; i < 50 && shown.loop !== "seen"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      shown = await status();
    }
    expect(shown.loop).toBe("seen");
    expect(shown.problem).toContain("ROBOTS_ORIGIN_URL");
  });

  it("every request the origins saw named the product, its version and its URL", () => {
    expect(agents.length).toBeGreaterThanOrEqual(12);
    const expected = `edge-sitemaps/${version} (+https://github.com/edge-sitemaps/edge-sitemaps)`;
    expect(agents.filter((agent) => agent !== expected)).toEqual([]);
  });
});
