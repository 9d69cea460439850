/**
 * Issue 50, item 8: a crawler's list judged as a whole. Each of 256 /8 prefixes is plausible on its
 * own, yet together they verify every IPv4 address; a list covering more than 4 × /8 of IPv4 (or
 * 4 × /32 of IPv6), overlaps and repeats counted once, is refused whole: the last good list stays in
 * use (real KV) and status says why. Coverage is checked against a reference count of generated lists.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rangeMatcher } from "../../src/crawlers/range-cache.ts";
import { WIDEST_LIST, coverage } from "../../src/crawlers/range-coverage.ts";
import { rangesStatus } from "../../src/crawlers/range-status.ts";
import { RangeFileError, SHORTEST_PREFIX, compileRanges, parseRangeList } from "../../src/crawlers/ranges.ts";
import { REFRESH_EVERY_MS, refreshCrawlerRanges } from "../../src/crawlers/refresh.ts";
import { services } from "../../src/services.ts";
import { freshOrigin } from "./support.ts";

const fileOf = (prefixes: readonly string[]): string =>
  JSON.stringify({ prefixes: prefixes.map((p) => (p.includes(":") ? { ipv6Prefix: p } : { ipv4Prefix: p })) });

/** A small IPv4 network: prefixes of 10.0.0.0/16 (lengths 16–32), so that a bit per address is a reference. */
const smallV4 = fc.record({ host: fc.integer({ min: 0, max: 0xffff }), length: fc.integer({ min: 16, max: 32 }) });
/** The same within 2001:db8::/112. */
const smallV6 = fc.record({ host: fc.integer({ min: 0, max: 0xffff }), length: fc.integer({ min: 112, max: 128 }) });

/** Addresses of a 65,536-address network covered by prefixes given as (host, length within `bits`), each address once. */
function referenceCount(prefixes: readonly { host: number; length: number }[], bits: number): number {
  const covered = new Uint8Array(0x10000);
  for (const { host, length } of prefixes) {
    const size = 2 ** (bits - length);
    const first = host - (host % size);
    covered.fill(1, first, first + size);
  }
  return covered.reduce((n, b) => n + b, 0);
}

const v4Text = ({ host, length }: { host: number; length: number }) => `10.0.${host >> 8}.${host & 255}/${length}`;
const v6Text = ({ host, length }: { host: number; length: number }) => `2001:db8::${host.toString(16)}/${length}`;

describe("the addresses a list covers", () => {
  it("are counted once however the prefixes repeat, overlap or nest (generated lists against one bit per address)", () => {
    fc.assert(
      fc.property(fc.array(smallV4, { maxLength: 40 }), fc.array(smallV6, { maxLength: 40 }), (v4, v6) => {
        // Repeats: the lists twice over, in another order.
        const texts = [...v4.map(v4Text), ...v6.map(v6Text)];
        const covered = coverage([...texts, ...[...texts].reverse()]);
        expect(covered).toEqual({ ipv4: BigInt(referenceCount(v4, 32)), ipv6: BigInt(referenceCount(v6, 128)) });
      }),
      { numRuns: 200 },
    );
  });
});

/**
 * Wide prefixes (/8–/10 of IPv4, /32–/34 of IPv6) over a few networks, so that lists repeat and
 * nest; the reference counts the /10 (/34) blocks covered. Each list also holds 192.0.2.0/24.
 */
const wideV4 = fc.record({ octet: fc.integer({ min: 1, max: 12 }), quarter: fc.integer({ min: 0, max: 3 }), length: fc.integer({ min: 8, max: 10 }) });
const wideV6 = fc.record({ group: fc.integer({ min: 0, max: 11 }), quarter: fc.integer({ min: 0, max: 3 }), length: fc.integer({ min: 32, max: 34 }) });
type Wide = { quarter: number; length: number };

/** The quarters (of the network's 4 blocks one or two bits longer) a prefix covers. */
const quarters = ({ quarter, length }: Wide, shortest: number): number[] =>
  length === shortest ? [0, 1, 2, 3] : length === shortest + 1 ? [quarter & 2, (quarter & 2) + 1] : [quarter];

describe("a list too wide as a whole", () => {
  it("is refused exactly when it covers more than 4 × /8 of IPv4 or 4 × /32 of IPv6 (generated lists against a reference)", () => {
    fc.assert(
      fc.property(fc.array(wideV4, { maxLength: 24 }), fc.array(wideV6, { maxLength: 24 }), (v4, v6) => {
        const v4Blocks = new Set(v4.flatMap((p) => quarters(p, 8).map((q) => p.octet * 4 + q)));
        const v6Blocks = new Set(v6.flatMap((p) => quarters(p, 32).map((q) => p.group * 4 + q)));
        const texts = [
          ...v4.map((p) => `${p.octet}.${p.quarter << 6}.0.0/${p.length}`),
          ...v6.map((p) => `2001:${p.group.toString(16)}:${(p.quarter << 14).toString(16)}::/${p.length}`),
          "192.0.2.0/24",
        ];
        const v4Covered = v4Blocks.size * 2 ** 22 + 256;
        const refused = v4Covered > WIDEST_LIST * 2 ** 24 || v6Blocks.size > WIDEST_LIST * 4;
        if (refused) {
          expect(() => parseRangeList(fileOf(texts))).toThrow(RangeFileError);
          expect(() => parseRangeList(fileOf(texts))).toThrow(/implausibly wide as a whole, refused/);
          // A list stored before this rule verifies nothing by address.
          expect(compileRanges([{ name: "googlebot", prefixes: texts }]).has("googlebot", "192.0.2.1")).toBe(false);
        } else {
          const list = parseRangeList(fileOf(texts));
          expect(coverage(list.prefixes)).toEqual({ ipv4: BigInt(v4Covered), ipv6: BigInt(v6Blocks.size) << 94n });
          const matcher = compileRanges([{ name: "googlebot", prefixes: list.prefixes }]);
          for (const p of v4) expect(matcher.has("googlebot", `${p.octet}.${p.quarter << 6}.0.1`)).toBe(true);
          expect(matcher.has("googlebot", "192.0.2.1")).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("256 /8s, each plausible, are refused whole; so is a fifth /32 of IPv6; four /8s are not", () => {
    const everyV4 = Array.from({ length: 256 }, (_, a) => `${a}.0.0.0/8`);
    expect(() => parseRangeList(fileOf(everyV4))).toThrow(/4,294,967,296 IPv4 addresses \(more than 4 × \/8\)/);
    const fiveV6 = Array.from({ length: 5 }, (_, i) => `2001:${i}::/32`);
    expect(() => parseRangeList(fileOf(fiveV6))).toThrow(/IPv6 addresses \(more than 4 × \/32\)/);
    expect(parseRangeList(fileOf(["1.0.0.0/8", "2.0.0.0/8", "3.0.0.0/8", "4.0.0.0/8"])).prefixes).toHaveLength(4);
    expect(parseRangeList(fileOf(fiveV6.slice(0, 4))).prefixes).toHaveLength(4);
    expect(SHORTEST_PREFIX).toEqual({ ipv4: 8, ipv6: 32 });
  });

  it("a list the size of Googlebot's (hundreds of /27 and /64) is far within the cap", () => {
    const list = [
      ...Array.from({ length: 400 }, (_, i) => `66.${249 - (i >> 8)}.${i & 255}.${(i % 8) * 32}/27`),
      ...Array.from({ length: 400 }, (_, i) => `2001:4860:4801:${i.toString(16)}::/64`),
    ];
    expect(parseRangeList(fileOf(list)).prefixes).toHaveLength(800);
  });

  it("keeps the last good list in use (real KV); status says why the new one was refused", async () => {
    const name = `googlebot-cap-${Math.random().toString(36).slice(2, 8)}`;
    const url = `https://google.test/${name}.json`;
    const origin = freshOrigin("range-cap");
    const e = { ...env, SITES: origin, CRAWLER_IP_RANGES: `${name}=${url}` } as Env;
    const s = services(e);
    const store = s.crawlerRanges!;
    const ranges = s.config.crawlers.ranges;
    const serving = (body: string) => async () => new Response(body, { headers: { "Content-Type": "application/json" } });
    const t0 = Date.now() - 2 * REFRESH_EVERY_MS;
    await refreshCrawlerRanges(store, ranges, { now: t0, fetch: serving(fileOf(["66.249.64.0/27", "2001:4860:4801:10::/64"])) });
    const report = await refreshCrawlerRanges(store, ranges, {
      now: t0 + REFRESH_EVERY_MS,
      fetch: serving(fileOf(Array.from({ length: 256 }, (_, a) => `${a}.0.0.0/8`))),
    });
    expect(report.failed).toEqual([{ name, error: expect.stringMatching(/^the list covers 4,294,967,296 IPv4 addresses .* refused$/) }]);
    const [status] = await rangesStatus(store, s.config);
    expect(status).toMatchObject({ name, prefixes: 2, fetchedAt: new Date(t0).toISOString(), error: report.failed[0]!.error });
    // A load as five minutes on: the good list verifies its own, and no other address.
    const matcher = await rangeMatcher(store, Date.now() + 10 * 60_000);
    expect(matcher?.has(name, "66.249.64.9")).toBe(true);
    expect(matcher?.has(name, "1.2.3.4")).toBe(false);
  });
});
