/**
 * Mirrors never delete a URL the remote lists (issue 34): an entry that fails validation keeps its
 * URL — its invalid field dropped, or, malformed as XML, its stored record kept — and is counted
 * as repaired in status; only an invalid loc is rejected, deleting nothing listed. A gzip bomb is
 * refused at MIRROR_MAX_BYTES having fed the decompressor small slices only.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SLICE_BYTES } from "../../src/mirror/inflate.ts";
import { mirrorSite, url, urlset, xml } from "./support/mirror-remote.ts";
import { call } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("an invalid entry keeps its URL", () => {
  it("a mirror of 100 URLs re-listed with 10 future lastmods (and a priority of 1.5, a changefreq of Daily): 100 served after the pass", async () => {
    const m = mirrorSite(["/sitemap.xml"]);
    const [mirror] = m.urls as [string];
    const locs = Array.from({ length: 100 }, (_, i) => `${m.origin}/p/${String(i).padStart(3, "0")}`);
    m.answers.set(mirror, xml(urlset(locs.map((loc) => url(loc, "<lastmod>2026-01-01</lastmod>")))));
    expect(await m.runOne(mirror)).toBe("synced");
    expect(await m.served()).toEqual(locs);

    const future = new Set(locs.slice(0, 10));
    const entries = locs.map((loc, i) =>
      future.has(loc)
        ? url(loc, "<lastmod>2099-01-01</lastmod>")
        : i === 50
          ? url(loc, "<lastmod>2026-02-01</lastmod><priority>1.5</priority>")
          : i === 51
            ? url(loc, "<changefreq>Daily</changefreq><priority>0.3</priority>")
            : url(loc, "<lastmod>2026-01-01</lastmod>"),
    );
    m.answers.set(mirror, xml(urlset(entries)));
    expect(await m.runOne(mirror)).toBe("synced");
    const [status] = await m.status();
    expect(status).toMatchObject({ state: "idle", lastError: null, counts: { records: 100, repaired: 12, rejected: 0, deleted: 0 } });
    expect(await m.live()).toEqual(locs);
    expect(await m.served()).toEqual(locs);
    // The invalid field is dropped, the rest of the entry kept.
    const rows = new Map(
      (
        await m.env.DB.prepare("SELECT loc, lastmod, changefreq, priority FROM urls WHERE origin = ?1").bind(m.origin).all<{
          loc: string;
          lastmod: string | null;
          changefreq: string | null;
          priority: number | null;
        }>()
      ).results.map((r) => [r.loc, r]),
    );
    expect(rows.get(locs[0]!)).toMatchObject({ lastmod: null });
    expect(rows.get(locs[50]!)).toMatchObject({ lastmod: "2026-02-01", priority: null });
    expect(rows.get(locs[51]!)).toMatchObject({ changefreq: null, priority: 0.3 });

    // Shown in /sitemap-admin/status and the dashboard's mirror table.
    const admin = await call(m.env, `${m.origin}/sitemap-admin/status`, { headers: AUTH });
    expect(((await admin.json()) as { mirrors: { counts: { repaired: number } }[] }).mirrors[0]!.counts.repaired).toBe(12);
    const page = await (await call(m.env, `${m.origin}/sitemap-admin/dashboard`, { headers: AUTH })).text();
    expect(page).toContain("<th>repaired</th>");
    expect(page).toMatch(/<td class="num">12<\/td>/);
  });

  it("an entry malformed as XML keeps its stored record as it is; a loc that is not a URL is rejected and deletes nothing listed", async () => {
    const m = mirrorSite(["/sitemap.xml"]);
    const [mirror] = m.urls as [string];
    const locs = Array.from({ length: 10 }, (_, i) => `${m.origin}/q/${i}`);
    m.answers.set(mirror, xml(urlset(locs.map((loc) => url(loc, "<lastmod>2026-01-01</lastmod>")))));
    expect(await m.runOne(mirror)).toBe("synced");

    const entries = [
      url(locs[0]!, "<lastmod>2026-03-01</lastmod><lastmod>2026-03-02</lastmod>"), // two lastmods: which one?
      url(`${m.origin}/q/1?a=1&b=2`), // a bare "&": the entry is malformed, and no stored record has this loc
      ...locs.slice(1).map((loc) => url(loc, "<lastmod>2026-01-01</lastmod>")),
      url("not a url"),
      url("https://elsewhere.example/x"),
    ];
    m.answers.set(mirror, xml(urlset(entries)));
    expect(await m.runOne(mirror)).toBe("synced");
    const [status] = await m.status();
    expect(status).toMatchObject({ state: "idle", counts: { records: 13, repaired: 2, rejected: 2, deleted: 0 } });
    expect(await m.live()).toEqual(locs);
    const kept = await m.env.DB.prepare("SELECT lastmod FROM urls WHERE loc = ?1").bind(locs[0]).first<{ lastmod: string }>();
    expect(kept?.lastmod).toBe("2026-01-01");
  });
});

async function gzip(text: string): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
}

/** A body arriving in pieces of `size` bytes, as a network would deliver it. */
function inPieces(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) controller.close();
      else controller.enqueue(bytes.slice(at, (at += size)));
    },
  });
}

describe("gzip", () => {
  it("a gzipped sitemap arriving in small pieces is read whole; one cut short fails, nothing deleted", async () => {
    const m = mirrorSite(["/sitemap.xml.gz"]);
    const [mirror] = m.urls as [string];
    const locs = Array.from({ length: 3000 }, (_, i) => `${m.origin}/z/${String(i).padStart(4, "0")}`);
    const bytes = await gzip(urlset(locs.map((loc) => url(loc, "<lastmod>2026-01-01</lastmod>"))));
    m.answers.set(mirror, () => new Response(inPieces(bytes, 777)));
    expect(await m.runOne(mirror, { requests: 10, records: 5000 })).toBe("synced");
    expect(await m.live()).toEqual(locs);

    m.answers.set(mirror, () => new Response(inPieces(bytes.slice(0, bytes.length - 100), 777)));
    expect(await m.runOne(mirror, { requests: 10, records: 5000 })).toBe("failed");
    expect((await m.status())[0]!.lastError).toBe(`${mirror}: the gzip data is corrupt or cut short`);
    expect(await m.live()).toEqual(locs);
  });

  it("a gzip bomb (256 MiB of spaces, one chunk) is refused at MIRROR_MAX_BYTES having fed the decompressor one slice at a time", async () => {
    // A sitemap that goes on: its root element, then 256 MiB of spaces (what a parser reads on).
    const spaces = new Uint8Array(1 << 20).fill(0x20);
    const cs = new CompressionStream("gzip");
    const writer = cs.writable.getWriter();
    const compressed = new Response(cs.readable).arrayBuffer();
    await writer.write(new TextEncoder().encode('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'));
    for (let i = 0; i < 256; i++) await writer.write(spaces);
    await writer.close();
    const bomb = new Uint8Array(await compressed);
    expect(bomb.byteLength).toBeGreaterThan(200_000);

    const m = mirrorSite(["/sitemap.xml.gz"], { MIRROR_MAX_BYTES: String(1 << 19) });
    const [mirror] = m.urls as [string];
    m.answers.set(mirror, xml(urlset([url(`${m.origin}/a`)])));
    expect(await m.runOne(mirror)).toBe("synced");

    // Count what is written to the decompressor, whatever the code under test does with it.
    const Real = DecompressionStream;
    const writes: number[] = [];
    class Counting {
      readonly readable: ReadableStream<Uint8Array>;
      readonly writable: WritableStream<Uint8Array>;
      constructor(format: ConstructorParameters<typeof DecompressionStream>[0]) {
        const inner = new Real(format);
        this.readable = inner.readable;
        const w = inner.writable.getWriter();
        this.writable = new WritableStream<Uint8Array>({
          write: async (chunk) => {
            writes.push(chunk.byteLength);
            await w.write(chunk);
          },
          close: () => w.close(),
          abort: (reason) => w.abort(reason),
        });
      }
    }
    vi.stubGlobal("DecompressionStream", Counting);
    m.answers.set(mirror, () => new Response(bomb, { headers: { "Content-Type": "application/gzip" } }));
    expect(await m.runOne(mirror)).toBe("failed");
    const [status] = await m.status();
    expect(status!.lastError).toBe(`${mirror} is larger than ${1 << 19} bytes decompressed (MIRROR_MAX_BYTES)`);
    // 512 KiB of spaces is ~0.5 KiB of gzip: the cap is met within the first slice or two, and no slice is larger than SLICE_BYTES.
    expect(writes.length).toBeGreaterThan(0);
    expect(Math.max(...writes)).toBeLessThanOrEqual(SLICE_BYTES);
    expect(writes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2 * SLICE_BYTES);
    expect(await m.live()).toEqual([`${m.origin}/a`]);
  });
});
