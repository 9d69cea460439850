/**
 * Whose host a URL reaches, for the settings of a registered site that name hosts
 * (src/registry/hosts.ts, docs/tenants.md "Settings that name hosts"). A site owns the hosts of
 * its registrable domain: the domain one label below its public suffix (the public suffix list,
 * bundled by tldts, its private section included: `a.github.io` owns `a.github.io` and what is
 * under it, never `b.github.io`), and every host under it, siblings of its own host included —
 * a registrable domain has one registrant. A host with none owns only itself: an IP address,
 * a single label (`localhost`), a public suffix itself (`co.uk`). Names under a top-level domain
 * the list does not know (`.test`, `.example`, `.localhost`) follow the list's default rule: the
 * unknown label is the suffix, so `shop.test` is registrable.
 */
import { parse } from "tldts";

/** A hostname as compared: `URL.hostname` (lowercased, IDN as punycode, IPv4 normalised) without a trailing dot. */
const comparable = (hostname: string): string => (hostname.endsWith(".") ? hostname.slice(0, -1) : hostname);

/** The registrable domain of `host` (a comparable hostname), or null when it has none. */
function registrableDomain(host: string): string | null {
  const parsed = parse(host, { allowPrivateDomains: true, extractHostname: false });
  return parsed.isIp ? null : parsed.domain;
}

/** Whether `host` is `domain` or a host under it. */
export const within = (host: string, domain: string): boolean => host === domain || host.endsWith(`.${domain}`);

/** The site's host as compared: also its registry key (one site a host, whatever its scheme or port; src/adapters/d1/site-registry.ts). */
export const siteHost = (origin: string): string => comparable(new URL(origin).hostname);

/**
 * `siteHost` of an origin in `URL.origin` form without a trailing dot, as the registry keeps them, by
 * string operations alone (the resolver's list of 20,000 origins): the authority without its port,
 * `[v6]` keeping its brackets, as migrations/0026_registry_site_hosts.sql backfills it.
 */
export function originHost(origin: string): string {
  const start = origin.indexOf("://") + 3;
  const end = origin.charCodeAt(start) === 0x5b /* [ */ ? origin.indexOf("]", start) + 1 : origin.indexOf(":", start);
  return comparable(end <= 0 ? origin.slice(start) : origin.slice(start, end));
}

/** The hosts of the sites SITES serves, as compared: never a registered site's own (the variables win for the sites they name). */
export const platformHosts = (sites: Iterable<string>): ReadonlySet<string> => new Set([...sites].map(siteHost));

/**
 * Hosts a registered site's settings may not name, even under its registrable domain: every other
 * site's, those SITES serves (the platform's) and the other registered sites' (another tenant's).
 */
export interface TakenHosts extends Iterable<string> {
  has(host: string): boolean;
}

/** The hosts of `sets` but `own` (the site's own host is never another site's), without copying them. */
export function takenHosts(own: string, ...sets: readonly ReadonlySet<string>[]): TakenHosts {
  return {
    has: (host) => host !== own && sets.some((set) => set.has(host)),
    *[Symbol.iterator]() {
      for (const set of sets) for (const host of set) if (host !== own) yield host;
    },
  };
}

/** The hosts the site at `origin` owns, in words (for a rule's message): its registrable domain and under it, else its host alone. */
export function ownHosts(origin: string): string {
  const host = siteHost(origin);
  const domain = registrableDomain(host);
  return domain === null ? `${host} only` : `${domain} or a host under it`;
}

/** Whether the site at `origin` owns `host` (a comparable hostname). */
export function owns(origin: string, host: string): boolean {
  const own = siteHost(origin);
  const domain = registrableDomain(own);
  return domain === null ? host === own : within(host, domain);
}

/**
 * Whether fetching `url` reaches a host the site at `origin` owns: an http(s) URL, parsed as
 * fetch() parses it (backslashes, percent-encoding, IDN, IPv4 forms resolved), without userinfo
 * (refused outright: it only ever serves to make a URL read as another host), whose hostname the
 * site owns, and not one of `taken` (other sites' hosts: SITES' and the other registered sites', never
 * a tenant's own even under its domain). The port is not the host's: any port of an own host is own.
 */
export function reachesOwnHost(url: string, origin: string, taken: TakenHosts): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return false;
  if (parsed.username !== "" || parsed.password !== "") return false;
  const host = comparable(parsed.hostname);
  return !taken.has(host) && owns(origin, host);
}
