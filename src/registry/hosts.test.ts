/**
 * The host rule of a registered site's settings (issue 50 item 4), generated: sites under ICANN,
 * private and unknown suffixes and sites without a registrable domain; hosts that are theirs (own
 * host, registrable domain, `www.`, siblings, deeper) or not (another registrant under the same
 * suffix, the suffix, look-alike prefixes and suffixes, IPs); each spelled the ways a URL may
 * spell one host (case, trailing dot, port, fullwidth letters, an ideographic dot, percent-encoding)
 * and wrapped in the URL tricks that make one host read as another (userinfo, a backslash or a
 * fragment before an `@`, another scheme). Whether each is own is known by construction, not by
 * the code under test.
 */
import fc from "fast-check";
import { getPublicSuffix } from "tldts";
import { describe, expect, it } from "vitest";
import { HOST_SETTINGS, hostProblems } from "./hosts.ts";
import { originHost, platformHosts, reachesOwnHost, siteHost, takenHosts } from "./own-host.ts";

/** No host served by SITES among the cases: the platform's hosts have their own cases below. */
const NONE: ReadonlySet<string> = new Set();

/** Suffixes whose registrable domains are one label below them: ICANN, private (one registrant per label), unknown (the list's default rule). */
const SUFFIXES = ["com", "co.uk", "de", "github.io", "pages.dev", "example", "test"];
/** Hosts with no registrable domain: they own only themselves. */
const BARE_HOSTS = ["localhost", "127.0.0.1", "[::1]", "203.0.113.9"];

interface Site {
  origin: string;
  host: string;
  /** The registrable domain, or null (a bare host). */
  domain: string | null;
  /** The suffix, and the label above it (a site with a registrable domain). */
  suffix: string;
  name: string;
}

const label = fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/);

const siteArb: fc.Arbitrary<Site> = fc.oneof(
  fc
    .record({ sub: fc.constantFrom("", "www.", "shop.", "a.b."), name: label, suffix: fc.constantFrom(...SUFFIXES), port: fc.constantFrom("", ":8443") })
    // A generated name that the list itself holds as a suffix (`de.com`, `us.com`: private section) is no registrable domain.
    .filter(({ name, suffix }) => getPublicSuffix(`${name}.${suffix}`, { allowPrivateDomains: true }) === suffix)
    .map(({ sub, name, suffix, port }) => {
      const host = `${sub}${name}.${suffix}`;
      return { origin: `https://${host}${port}`, host, domain: `${name}.${suffix}`, suffix, name };
    }),
  fc.record({ host: fc.constantFrom(...BARE_HOSTS), port: fc.constantFrom("", ":8787") }).map(({ host, port }) => ({
    origin: `http://${host}${port}`,
    host,
    domain: null,
    suffix: "",
    name: "",
  })),
);

/** A host to name, and whether the site owns it (by construction). */
interface Target {
  host: string;
  own: boolean;
  /** A domain name (not an IP literal): may be spelled with fullwidth letters or percent-encoded. */
  named: boolean;
}

function targetsOf(site: Site, other: string): Target[] {
  const bare = site.domain === null;
  const foreign = (host: string, named = true): Target => ({ host, own: false, named });
  const common = [{ host: site.host, own: true, named: !/^[\d.[\]:]+$/.test(site.host) }, foreign("198.51.100.7", false), foreign("evil.test")];
  if (bare) return [...common, foreign(`a.${site.host === "localhost" ? "localhost" : "example"}`), foreign("other.example")];
  const d = site.domain!;
  const own = (host: string): Target => ({ host, own: true, named: true });
  return [
    ...common,
    own(d),
    own(`www.${d}`),
    own(`${other}-sibling.${d}`),
    own(`x.y.${d}`),
    // Another registrant under the same suffix, the suffix itself, look-alikes.
    foreign(`${site.name}${other}.${site.suffix}`),
    foreign(site.suffix),
    foreign(`x${d}`),
    foreign(`${d}.evil.test`),
    foreign(`${site.name}.${site.suffix === "com" ? "net" : "com"}`),
  ];
}

/** Ways to write one host: all parse to the same `URL.hostname`. */
const SPELLINGS: ((host: string, named: boolean) => string)[] = [
  (h) => h,
  (h) => h.toUpperCase(),
  (h, named) => (named ? `${h}.` : h),
  (h, named) => (named ? String.fromCharCode(h.charCodeAt(0) + 0xfee0) + h.slice(1) : h),
  (h, named) => (named && h.includes(".") ? h.replace(".", "。") : h),
  (h, named) => (named ? `%${h.charCodeAt(0).toString(16)}${h.slice(1)}` : h),
];

/** URLs around a spelled host, and whether fetching them reaches that host with no userinfo (else: never own). */
const WRAPPERS: ((host: string, siteHost: string) => { url: string; reachesTarget: boolean })[] = [
  (h) => ({ url: `https://${h}/sitemap.xml`, reachesTarget: true }),
  (h) => ({ url: `HTTP://${h}:8080/s.xml`, reachesTarget: true }),
  // Userinfo: refused outright, whichever side is own.
  (h, own) => ({ url: `https://${own}@${h}/s.xml`, reachesTarget: false }),
  (h) => ({ url: `https://user:pw@${h}/s.xml`, reachesTarget: false }),
  // A backslash or a fragment ends the authority: the host is the one before it, the `@…` is path.
  (h, own) => ({ url: `https://${h}\\@${own}/s.xml`, reachesTarget: true }),
  (h, own) => ({ url: `https://${h}#@${own}/s.xml`, reachesTarget: true }),
  (h) => ({ url: `ftp://${h}/s.xml`, reachesTarget: false }),
];

/** A generated case: a site, a host to name, how the host is spelled and how the URL is wrapped around it. */
interface Case {
  site: Site;
  target: Target;
  spelling: number;
  wrapper: number;
}

const caseArb: fc.Arbitrary<Case> = siteArb.chain((site) =>
  fc.record({
    site: fc.constant(site),
    target: label.chain((other) => fc.constantFrom(...targetsOf(site, other))),
    spelling: fc.nat(SPELLINGS.length - 1),
    wrapper: fc.nat(WRAPPERS.length - 1),
  }),
);

const urlOf = (c: Case) => WRAPPERS[c.wrapper]!(SPELLINGS[c.spelling]!(c.target.host, c.target.named), c.site.host);

describe("reachesOwnHost", () => {
  it("is true exactly for an http(s) URL without userinfo whose host the site's registrant owns", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { url, reachesTarget } = urlOf(c);
        expect(reachesOwnHost(url, c.site.origin, NONE), url).toBe(reachesTarget && c.target.own);
      }),
      { numRuns: 2000 },
    );
  });

  it("never lets a public suffix or a private one's other tenants be own (www.com, github.io)", () => {
    expect(reachesOwnHost("https://evil.com/", "https://www.com", NONE)).toBe(false);
    expect(reachesOwnHost("https://a.www.com/", "https://www.com", NONE)).toBe(true);
    expect(reachesOwnHost("https://b.github.io/", "https://a.github.io", NONE)).toBe(false);
    expect(reachesOwnHost("https://blog.shop.example/", "https://www.shop.example", NONE)).toBe(true);
  });
});

describe("hostProblems", () => {
  it("refuses each host setting exactly when a URL it makes the Worker fetch is not own, unless SITE_SETTINGS_ANY_HOST", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { url, reachesTarget } = urlOf(c);
        // Only what the variables read (http(s) URLs; other values are their own rule's to refuse).
        fc.pre(/^https?:/i.test(url));
        const values = { MIRROR_SITEMAPS: url, ROBOTS_ORIGIN_URL: url, PING_URLS: `${url}?s={sitemap}` };
        const refused = hostProblems(c.site.origin, values, false, NONE).map((p) => p.setting);
        expect(refused, url).toEqual(reachesTarget && c.target.own ? [] : [...HOST_SETTINGS]);
        expect(hostProblems(c.site.origin, values, true, NONE)).toEqual([]);
      }),
      { numRuns: 1000 },
    );
  });

  it("judges a template as the Worker fills it: {origin}, {host} and {sitemap} in every setting", () => {
    fc.assert(
      fc.property(siteArb, (site) => {
        const own = ["{origin}/x.xml?s={sitemap}", "https://{host}/ping?s={sitemap}", "http://{host}/{sitemap}"];
        for (const template of own) {
          expect(hostProblems(site.origin, { ROBOTS_ORIGIN_URL: template, PING_URLS: template }, false, NONE), template).toEqual([]);
        }
        const foreign = ["https://{host}.evil.test/?s={sitemap}", "https://{host}@evil.test/?s={sitemap}", "https://{sitemap}@evil.test/"];
        for (const template of foreign) {
          expect(
            hostProblems(site.origin, { ROBOTS_ORIGIN_URL: template, PING_URLS: template }, false, NONE).map((p) => p.setting),
            template,
          ).toEqual(["ROBOTS_ORIGIN_URL", "PING_URLS"]);
        }
      }),
    );
  });
});

describe("GSC_PROPERTY", () => {
  it("holds the site and no other registrant's: origin + /, or sc-domain: between its host and its registrable domain", () => {
    fc.assert(
      fc.property(siteArb, fc.boolean(), (site, anyHost) => {
        const holds = (property: string): boolean => hostProblems(site.origin, { GSC_PROPERTY: property }, anyHost, NONE).length === 0;
        expect(holds("{origin}/")).toBe(true);
        expect(holds(`${site.origin}/`)).toBe(true);
        expect(holds(`${site.origin}/blog/`)).toBe(false);
        expect(holds(`https://user@${new URL(site.origin).host}/`)).toBe(false);
        expect(holds(`${site.origin.replace(/^https?/, (s) => (s === "https" ? "http" : "https"))}/`)).toBe(false);
        expect(holds("sc-domain:{host}")).toBe(new URL(site.origin).port === "");
        expect(holds("sc-domain:evil.test")).toBe(false);
        if (site.domain === null) return;
        expect(holds(`sc-domain:${site.host}`)).toBe(true);
        expect(holds(`sc-domain:${site.domain}`)).toBe(true);
        expect(holds(`sc-domain:${site.suffix}`)).toBe(false);
        expect(holds(`sc-domain:sibling-${site.name}.${site.suffix}`)).toBe(false);
        expect(holds(`sc-domain:other.${site.domain}`)).toBe(false);
      }),
    );
  });
});

describe("a host SITES serves", () => {
  // A platform giving tenants hosts under its own domain: by the registrable-domain rule alone each tenant would own the platform's host.
  const platformArb = fc.record({
    domain: fc.constantFrom("platform.example", "saas.co.uk", "host.test"),
    tenant: fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/).filter((t) => t !== "www"),
    www: fc.boolean(),
  });

  it("is never a registered site's own, even under its registrable domain; any other host of that domain still is", () => {
    fc.assert(
      fc.property(platformArb, fc.boolean(), ({ domain, tenant, www }, anyHost) => {
        const platformHost = www ? `www.${domain}` : domain;
        const platform = platformHosts([`https://${platformHost}`]);
        const origin = `https://${tenant}.${domain}`;
        for (const url of [`https://${platformHost}/sitemap.xml`, `http://${platformHost.toUpperCase()}.:8443/robots.txt`]) {
          expect(reachesOwnHost(url, origin, platform), url).toBe(false);
          const refused = hostProblems(origin, { MIRROR_SITEMAPS: url, ROBOTS_ORIGIN_URL: url, PING_URLS: `${url}?s={sitemap}` }, anyHost, platform);
          expect(refused.map((p) => p.setting)).toEqual(anyHost ? [] : [...HOST_SETTINGS]);
        }
        expect(reachesOwnHost(`https://cms-${tenant}.${domain}/s.xml`, origin, platform)).toBe(true);
      }),
    );
  });

  it("is in no sc-domain property a registered site may name", () => {
    fc.assert(
      fc.property(platformArb, fc.boolean(), ({ domain, tenant, www }, anyHost) => {
        const platform = platformHosts([`https://${www ? `www.${domain}` : domain}`]);
        const origin = `https://${tenant}.${domain}`;
        const holds = (property: string): boolean => hostProblems(origin, { GSC_PROPERTY: property }, anyHost, platform).length === 0;
        expect(holds(`sc-domain:${domain}`)).toBe(false);
        expect(holds(`sc-domain:${tenant}.${domain}`)).toBe(true);
        expect(holds("{origin}/")).toBe(true);
      }),
    );
  });
});

describe("another registered site's host", () => {
  it("is never the site's own under their one registrable domain; the site's own host never counts as another's", () => {
    fc.assert(
      fc.property(label, label, label, fc.boolean(), (domain, mine, theirs, anyHost) => {
        fc.pre(mine !== theirs);
        const origin = `https://${mine}.${domain}.example`;
        const taken = takenHosts(siteHost(origin), new Set([`${theirs}.${domain}.example`, `${mine}.${domain}.example`]));
        const url = `https://${theirs}.${domain}.example/sitemap.xml`;
        expect(reachesOwnHost(url, origin, taken)).toBe(false);
        expect(reachesOwnHost(`https://${mine}.${domain}.example/s.xml`, origin, taken)).toBe(true);
        expect(hostProblems(origin, { MIRROR_SITEMAPS: url }, anyHost, taken).length).toBe(anyHost ? 0 : 1);
        expect(hostProblems(origin, { GSC_PROPERTY: `sc-domain:${domain}.example` }, anyHost, taken).length).toBe(1);
        expect(hostProblems(origin, { GSC_PROPERTY: `sc-domain:${mine}.${domain}.example` }, anyHost, taken)).toEqual([]);
      }),
    );
  });

  it("is read off the registry's origins as siteHost reads it (the resolver's list, by string operations)", () => {
    fc.assert(
      fc.property(siteArb, fc.constantFrom("http", "https"), (site, scheme) => {
        const origin = new URL(`${scheme}://${new URL(site.origin).host}`).origin;
        expect(originHost(origin)).toBe(siteHost(origin));
      }),
    );
  });
});
