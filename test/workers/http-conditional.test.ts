/**
 * Conditional requests and HEAD on sitemap documents (RFC 9110 §13): If-None-Match with lists, `*`
 * and weak comparison, taking precedence over If-Modified-Since; 304 with validators and no body.
 */
import { describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { ifNoneMatchMatches, isNotModified, parseEntityTags, parseHttpDate } from "../../src/http/cache/conditional.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { newSite, write } from "./regen-support.ts";
import { call } from "./support.ts";

const PAST = Date.UTC(2026, 0, 1, 12, 30, 45, 678);

/** Every representation of a shard, and the index. */
const REPRESENTATIONS = [
  ["/sitemap-pages-1.xml", {}],
  ["/sitemap-pages-1.xml", { "Accept-Encoding": "gzip" }],
  ["/sitemap-pages-1.xml.gz", {}],
  ["/sitemap.xml", {}],
] as const;

describe("If-None-Match parsing", () => {
  it("reads lists, *, weak tags, and ignores malformed members", () => {
    expect(parseEntityTags("*")).toBe("*");
    expect(parseEntityTags(' "a" ,W/"b",  "c-d"')).toEqual(['"a"', '"b"', '"c-d"']);
    expect(parseEntityTags('garbage, "ok", W/"", "un"closed"')).toEqual(['"ok"', '""']);
    expect(ifNoneMatchMatches('W/"v1-g"', '"v1-g"')).toBe(true);
    expect(ifNoneMatchMatches('"x", "v1-g"', '"v1-g"')).toBe(true);
    expect(ifNoneMatchMatches('"v1-i"', '"v1-g"')).toBe(false);
    expect(ifNoneMatchMatches("v1-g", '"v1-g"')).toBe(false);
    expect(parseHttpDate("Thu, 01 Jan 2026 12:30:45 GMT")).toBe(Date.UTC(2026, 0, 1, 12, 30, 45));
    expect(parseHttpDate("Thursday, 01-Jan-26 12:30:45 GMT")).toBe(Date.UTC(2026, 0, 1, 12, 30, 45));
    expect(parseHttpDate("yesterday")).toBeNull();
    // If-None-Match wins over If-Modified-Since, even when it does not match.
    const h = new Headers({ "If-None-Match": '"other"', "If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT" });
    expect(isNotModified(h, '"v"', PAST)).toBe(false);
  });
});

describe("conditional GET and HEAD", () => {
  async function site() {
    const s = newSite("http", { MAX_URLS_PER_SHARD: "100" });
    await write(s, demoSection(s.origin, "pages", 150), PAST);
    await rebuildManifest(services(s.env), s.origin);
    return s;
  }

  it("answers 304 with the validators and no body for a matching If-None-Match", async () => {
    const s = await site();
    for (const [path, headers] of REPRESENTATIONS) {
      const full = await call(s.env, s.origin + path, { headers });
      await full.arrayBuffer();
      const etag = full.headers.get("etag")!;
      expect(etag).toMatch(/^"[0-9a-f]{24}-[igf]"$/);
      for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, "*"]) {
        const res = await call(s.env, s.origin + path, { headers: { ...headers, "If-None-Match": inm } });
        expect(res.status, `${path} ${inm}`).toBe(304);
        expect(await res.text()).toBe("");
        for (const name of ["etag", "last-modified", "cache-control", "vary", "cache-tag"])
          expect(res.headers.get(name), name).toBe(full.headers.get(name));
        expect(res.headers.get("content-encoding")).toBeNull();
      }
      const miss = await call(s.env, s.origin + path, { headers: { ...headers, "If-None-Match": '"nope"' } });
      expect(miss.status).toBe(200);
      await miss.arrayBuffer();
    }
  });

  it("gives each representation its own ETag and validates across them", async () => {
    const s = await site();
    const identity = await call(s.env, `${s.origin}/sitemap-pages-1.xml`);
    const gzipped = await call(s.env, `${s.origin}/sitemap-pages-1.xml`, { headers: { "Accept-Encoding": "gzip" } });
    const file = await call(s.env, `${s.origin}/sitemap-pages-1.xml.gz`);
    const etags = [identity, gzipped, file].map((r) => r.headers.get("etag"));
    expect(new Set(etags).size).toBe(3);
    // The identity ETag does not validate the gzip representation.
    const cross = await call(s.env, `${s.origin}/sitemap-pages-1.xml`, { headers: { "Accept-Encoding": "gzip", "If-None-Match": etags[0]! } });
    expect(cross.status).toBe(200);
    await Promise.all([identity, gzipped, file, cross].map((r) => r.arrayBuffer()));
  });

  it("uses If-Modified-Since only without If-None-Match, at one-second resolution", async () => {
    const s = await site();
    const url = `${s.origin}/sitemap-pages-2.xml`;
    const full = await call(s.env, url);
    await full.arrayBuffer();
    const lastModified = full.headers.get("last-modified")!;
    expect(lastModified).toBe("Thu, 01 Jan 2026 12:30:45 GMT");
    expect((await call(s.env, url, { headers: { "If-Modified-Since": lastModified } })).status).toBe(304);
    expect((await call(s.env, url, { headers: { "If-Modified-Since": "Fri, 02 Jan 2026 00:00:00 GMT" } })).status).toBe(304);
    const older = await call(s.env, url, { headers: { "If-Modified-Since": "Thu, 01 Jan 2026 12:30:44 GMT" } });
    expect(older.status).toBe(200);
    await older.arrayBuffer();
    const bad = await call(s.env, url, { headers: { "If-Modified-Since": "not a date" } });
    expect(bad.status).toBe(200);
    await bad.arrayBuffer();
    // If-None-Match present and not matching: If-Modified-Since is ignored.
    const precedence = await call(s.env, url, { headers: { "If-None-Match": '"nope"', "If-Modified-Since": lastModified } });
    expect(precedence.status).toBe(200);
    await precedence.arrayBuffer();
  });

  it("answers HEAD with the same headers as GET and no body", async () => {
    const s = await site();
    for (const [path, headers] of REPRESENTATIONS) {
      const head = await call(s.env, s.origin + path, { method: "HEAD", headers });
      const get = await call(s.env, s.origin + path, { headers });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe("");
      for (const name of ["etag", "last-modified", "cache-control", "content-type", "content-encoding", "vary", "cache-tag", "x-robots-tag"]) {
        expect(head.headers.get(name), `${path} ${name}`).toBe(get.headers.get(name));
      }
      await get.arrayBuffer();
      const conditional = await call(s.env, s.origin + path, { method: "HEAD", headers: { ...headers, "If-None-Match": get.headers.get("etag")! } });
      expect(conditional.status).toBe(304);
    }
  });
});
