/**
 * How many addresses a crawler's list covers, judged as a whole (issue 50): each prefix may be
 * plausible on its own (/8 and longer for IPv4, ranges.ts SHORTEST_PREFIX) while the list, 256 /8s,
 * covers every IPv4 address. Overlapping and nested prefixes are counted once. A list covering more
 * than WIDEST_LIST prefixes of the shortest length of a family is refused whole (ranges.ts).
 */
import ipaddr from "ipaddr.js";

/** A list may cover at most this many prefixes of the shortest plausible length per family: 4 × /8 of IPv4, 4 × /32 of IPv6. */
export const WIDEST_LIST = 4;

/** Addresses covered per family (bigint: IPv6 counts pass 2^53). */
export interface Coverage {
  ipv4: bigint;
  ipv6: bigint;
}

/** The addresses covered by the union of `blocks` ([first, size]): sorted, each counted past the end reached so far. */
function union(blocks: [bigint, bigint][]): bigint {
  blocks.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let covered = 0n;
  let end = 0n;
  for (const [start, size] of blocks) {
    const stop = start + size;
    if (stop <= end) continue;
    covered += stop - (start > end ? start : end);
    end = stop;
  }
  return covered;
}

/** The addresses the canonical prefixes cover together, per family (a prefix that does not read as one is skipped). */
export function coverage(prefixes: Iterable<string>): Coverage {
  const v4: [bigint, bigint][] = [];
  const v6: [bigint, bigint][] = [];
  for (const prefix of prefixes) {
    let address: ipaddr.IPv4 | ipaddr.IPv6;
    let length: number;
    try {
      [address, length] = ipaddr.parseCIDR(prefix);
    } catch {
      continue;
    }
    const bits = address.kind() === "ipv4" ? 32 : 128;
    const first = address.toByteArray().reduce((n, byte) => (n << 8n) | BigInt(byte), 0n);
    // The network's first address: host bits cleared (a canonical prefix has none).
    const size = 1n << BigInt(bits - length);
    (bits === 32 ? v4 : v6).push([first - (first % size), size]);
  }
  return { ipv4: union(v4), ipv6: union(v6) };
}

/** The most addresses a list may cover per family: WIDEST_LIST prefixes of the shortest plausible length. */
function coverageCap(shortest: { ipv4: number; ipv6: number }): Coverage {
  return { ipv4: BigInt(WIDEST_LIST) << BigInt(32 - shortest.ipv4), ipv6: BigInt(WIDEST_LIST) << BigInt(128 - shortest.ipv6) };
}

/** Why `prefixes` together cover too much (over the cap in a family), said for status; null when they are within it. */
export function tooWideAsAWhole(prefixes: Iterable<string>, shortest: { ipv4: number; ipv6: number }): string | null {
  const covered = coverage(prefixes);
  const cap = coverageCap(shortest);
  const said: string[] = [];
  if (covered.ipv4 > cap.ipv4) said.push(`${covered.ipv4.toLocaleString("en-US")} IPv4 addresses (more than ${WIDEST_LIST} × /${shortest.ipv4})`);
  // An IPv6 count is said as the power of two at or below it: its digits would say nothing.
  if (covered.ipv6 > cap.ipv6)
    said.push(`at least 2^${covered.ipv6.toString(2).length - 1} IPv6 addresses (more than ${WIDEST_LIST} × /${shortest.ipv6})`);
  return said.length === 0 ? null : `the list covers ${said.join(" and ")}: implausibly wide as a whole, refused`;
}
