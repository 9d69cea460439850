/**
 * The crawlers' published IP ranges: a list as Google and Bing publish it (googlebot.json,
 * bingbot.json: `{"creationTime": …, "prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix":
 * "2001:4860:4801:10::/64"}]}`) read into CIDR prefixes, and a matcher that says whose ranges hold
 * an address. Addresses are parsed by ipaddr.js (IPv6 with `::`, embedded and IPv4-mapped
 * addresses); the matcher indexes each crawler's networks by prefix length, so a lookup costs one
 * hash probe per distinct length (a handful), whatever the number of prefixes.
 */
import ipaddr from "ipaddr.js";
import { z } from "zod";
import { tooWideAsAWhole } from "./range-coverage.ts";

/** A list that could not be read: its message names what is wrong, never the body. */
export class RangeFileError extends Error {
  override readonly name = "RangeFileError";
}

/** The file: its `prefixes` array (other keys, such as `creationTime`, are not read). */
const FileSchema = z.object({ prefixes: z.array(z.unknown()) });
/** One entry of it; one of another shape is skipped. */
const EntrySchema = z.union([z.object({ ipv4Prefix: z.string() }), z.object({ ipv6Prefix: z.string() })]);

/** A prefix in its canonical form (`66.249.64.0/27`, `2001:4860:4801:10::/64`), host bits cleared; null when not one of `kind`. */
function canonicalPrefix(text: string, kind: "ipv4" | "ipv6"): string | null {
  const valid = kind === "ipv4" ? ipaddr.IPv4.isValidCIDRFourPartDecimal(text) : ipaddr.IPv6.isValidCIDR(text) && !text.includes("%");
  if (!valid) return null;
  const [address, length] = ipaddr.parseCIDR(text);
  if (address.kind() !== kind) return null;
  const network = kind === "ipv4" ? ipaddr.IPv4.networkAddressFromCIDR(text) : ipaddr.IPv6.networkAddressFromCIDR(text);
  return `${kind === "ipv6" ? (network as ipaddr.IPv6).toRFC5952String() : network.toString()}/${length}`;
}

/**
 * The shortest prefix a crawler's list may hold: a search engine's crawlers sit in a few small
 * networks, so a /0–/7 IPv4 or a /0–/31 IPv6 prefix (`0.0.0.0/0`: every address) is a damaged or
 * hostile list, never a crawler's range. Such a prefix is refused, and status shows it.
 */
export const SHORTEST_PREFIX = { ipv4: 8, ipv6: 32 } as const;

/** Whether a canonical prefix is at least SHORTEST_PREFIX long. */
function plausible(prefix: string): boolean {
  const length = Number(prefix.slice(prefix.lastIndexOf("/") + 1));
  return length >= (prefix.includes(":") ? SHORTEST_PREFIX.ipv6 : SHORTEST_PREFIX.ipv4);
}

/** Refused prefixes kept to show at most. */
const REFUSED_KEPT = 10;

/**
 * The prefixes of a published list (`text`: the file's body), canonical and without repeats, and
 * those refused as implausibly wide (at most REFUSED_KEPT); keys other than `prefixes`, and entries
 * that are no valid prefix, are ignored. Throws RangeFileError for a body that is not such a file,
 * holds no valid, plausible prefix, or whose plausible prefixes together cover more than a
 * crawler's list can (range-coverage.ts: 256 /8s are each plausible, and every IPv4 address).
 */
export function parseRangeList(text: string): { prefixes: string[]; refused: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RangeFileError("not JSON");
  }
  const file = FileSchema.safeParse(json);
  if (!file.success) throw new RangeFileError('not a list of IP ranges (no "prefixes" array)');
  const out = new Set<string>();
  const refused = new Set<string>();
  for (const entry of file.data.prefixes) {
    const e = EntrySchema.safeParse(entry);
    if (!e.success) continue;
    const prefix = "ipv4Prefix" in e.data ? canonicalPrefix(e.data.ipv4Prefix.trim(), "ipv4") : canonicalPrefix(e.data.ipv6Prefix.trim(), "ipv6");
    if (prefix === null) continue;
    if (plausible(prefix)) out.add(prefix);
    else if (refused.size < REFUSED_KEPT) refused.add(prefix);
  }
  if (out.size === 0 && refused.size > 0) {
    throw new RangeFileError(`every prefix is implausibly wide (shorter than /${SHORTEST_PREFIX.ipv4} for IPv4, /${SHORTEST_PREFIX.ipv6} for IPv6)`);
  }
  if (out.size === 0) throw new RangeFileError("no valid IP prefix in the list");
  const wide = tooWideAsAWhole(out, SHORTEST_PREFIX);
  if (wide !== null) throw new RangeFileError(wide);
  return { prefixes: [...out], refused: [...refused] };
}

/** The plausible prefixes of a published list (parseRangeList without what it refused). */
export function parseRangeFile(text: string): string[] {
  return parseRangeList(text).prefixes;
}

/** One crawler's prefixes (CIDR, as parseRangeFile gives them). */
export interface CrawlerPrefixes {
  name: string;
  prefixes: readonly string[];
}

/** Says whose published ranges hold a client address. */
export interface RangeMatcher {
  /** The crawler whose ranges hold `ip` (the first listed, when several do); null when none does, or `ip` is no address. */
  crawlerOf(ip: string): string | null;
  /** Whether `crawler`'s ranges hold `ip`. */
  has(crawler: string, ip: string): boolean;
  /** Whether `crawler`'s published list is loaded (at least one prefix): its addresses alone then verify it. */
  knows(crawler: string): boolean;
}

/** A crawler's networks: per prefix length, the masked network addresses. */
interface Networks {
  v4: Map<number, Set<number>>;
  v6: Map<number, Set<string>>;
}

/** An IPv4 address as an unsigned 32-bit number. */
const v4Number = (octets: readonly number[]): number => ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;

/** The first `length` bits of an IPv4 address. */
const v4Masked = (value: number, length: number): number => (length === 0 ? 0 : (value & (-1 << (32 - length))) >>> 0);

/** The first `length` bits of an IPv6 address (its eight 16-bit parts), as a key. */
function v6Masked(parts: readonly number[], length: number): string {
  const whole = length >>> 4;
  const rest = length & 15;
  let key = "";
  for (let i = 0; i < whole; i++) key += `${parts[i]!.toString(16)}:`;
  if (rest > 0) key += (parts[whole]! & ((0xffff << (16 - rest)) & 0xffff)).toString(16);
  return key;
}

function add<K>(map: Map<number, Set<K>>, length: number, key: K): void {
  let set = map.get(length);
  if (!set) map.set(length, (set = new Set()));
  set.add(key);
}

/** A parsed address: IPv4 as an unsigned 32-bit number, IPv6 as its eight 16-bit parts. */
type Address = { v4: number; v6?: never } | { v6: readonly number[]; v4?: never };

const DOTTED_QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * A client address (`CF-Connecting-IP`): dotted-quad IPv4, or IPv6 (an IPv4-mapped one as its
 * IPv4); null when it is neither. IPv4 is read here (ipaddr.js's validation of it costs tens of µs).
 */
function parseAddress(ip: string): Address | null {
  const text = ip.trim();
  if (!text.includes(":")) {
    const quad = DOTTED_QUAD.exec(text);
    if (quad === null) return null;
    const octets = quad.slice(1).map(Number);
    return octets.every((o) => o <= 255) ? { v4: v4Number(octets) } : null;
  }
  let address: ipaddr.IPv6;
  try {
    address = ipaddr.IPv6.parse(text);
  } catch {
    return null;
  }
  return address.isIPv4MappedAddress() ? { v4: v4Number(address.toIPv4Address().octets) } : { v6: address.parts };
}

function contains(networks: Networks, address: Address): boolean {
  if (address.v4 !== undefined) {
    for (const [length, set] of networks.v4) if (set.has(v4Masked(address.v4, length))) return true;
    return false;
  }
  for (const [length, set] of networks.v6) if (set.has(v6Masked(address.v6, length))) return true;
  return false;
}

/**
 * The matcher of `lists` (prefixes that do not parse, or are implausibly wide, are skipped: lists
 * come from parseRangeList; a list stored before its rules is held to them here too, a list too
 * wide as a whole then verifying nothing by address).
 */
export function compileRanges(lists: readonly CrawlerPrefixes[]): RangeMatcher {
  const byCrawler = new Map<string, Networks>();
  for (const { name, prefixes } of lists) {
    let networks = byCrawler.get(name);
    if (!networks) byCrawler.set(name, (networks = { v4: new Map(), v6: new Map() }));
    if (tooWideAsAWhole(prefixes.filter(plausible), SHORTEST_PREFIX) !== null) continue;
    for (const prefix of prefixes) {
      if (!plausible(prefix)) continue;
      let address: ipaddr.IPv4 | ipaddr.IPv6;
      let length: number;
      try {
        [address, length] = ipaddr.parseCIDR(prefix);
      } catch {
        continue;
      }
      if (address.kind() === "ipv4") add(networks.v4, length, v4Masked(v4Number((address as ipaddr.IPv4).octets), length));
      else add(networks.v6, length, v6Masked((address as ipaddr.IPv6).parts, length));
    }
  }
  return {
    crawlerOf(ip) {
      const address = parseAddress(ip);
      if (address === null) return null;
      for (const [name, networks] of byCrawler) if (contains(networks, address)) return name;
      return null;
    },
    has(crawler, ip) {
      const networks = byCrawler.get(crawler);
      const address = networks ? parseAddress(ip) : null;
      return address !== null && contains(networks!, address);
    },
    knows(crawler) {
      const networks = byCrawler.get(crawler);
      return networks !== undefined && (networks.v4.size > 0 || networks.v6.size > 0);
    },
  };
}
