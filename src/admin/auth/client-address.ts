/**
 * Who a failed sign-in is counted against (docs/dashboard.md "Guessing"): the client's address as
 * Cloudflare gives it (`CF-Connecting-IP`), an IPv4 address whole and an IPv6 address by its /64.
 * One IPv6 client holds a whole /64 (a home or a cloud server gets at least that, and picks any
 * address in it at will), so counting per address would give it 2⁶⁴ fresh counters.
 *
 * A request without a usable address did not come from the internet through Cloudflare, whose edge
 * always sets the header (and Miniflare's, for `npm start`): a service binding, another Worker of
 * the account, a test calling the entry. Such requests are never pooled under one shared key,
 * which would let any of them lock out all the others: the caller decides (src/admin/auth.ts).
 */

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const HEXTET = /^[0-9a-f]{1,4}$/;

/** The eight 16-bit groups of an IPv6 address (an embedded IPv4 tail counts as two), or null. */
function hextets(address: string): number[] | null {
  const text = address.toLowerCase().replace(/%.*$/, "");
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (part: string): string[] | null => {
    if (part === "") return [];
    const out = part.split(":");
    const last = out.at(-1)!;
    if (IPV4.test(last)) {
      const [a, b, c, d] = last.split(".").map(Number) as [number, number, number, number];
      out.splice(-1, 1, ((a << 8) | b).toString(16), ((c << 8) | d).toString(16));
    }
    return out.every((g) => HEXTET.test(g)) ? out : null;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  return [...head, ...Array<string>(missing).fill("0"), ...tail].map((g) => Number.parseInt(g, 16));
}

/**
 * The key a client's failures are counted under: `v4:<address>`, `v6:<first four groups>::/64`, or
 * null when the request carries no usable address. An IPv4 address written as IPv6
 * (`::ffff:192.0.2.1`) is its IPv4 address.
 */
export function clientKey(request: Request): string | null {
  const address = request.headers.get("CF-Connecting-IP")?.trim() ?? "";
  if (IPV4.test(address)) return `v4:${address}`;
  if (!address.includes(":")) return null;
  const groups = hextets(address);
  if (groups === null) return null;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `v4:${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  }
  return `v6:${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}
