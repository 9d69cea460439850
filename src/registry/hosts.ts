/**
 * Settings of a registered site that name hosts (docs/tenants.md "Settings that name hosts"): the
 * Worker fetches mirrored sitemaps and robots.txt from them and pings them, and Search Console is
 * read and written with the platform's one service account, so a tenant naming another's host would
 * make the platform fetch, ping or submit on its behalf. Each such setting is held to the site's own
 * domain: its host without a leading `www.`, and any host under it (a host's subdomains are its
 * registrant's). No public-suffix list is bundled, so a sibling (`blog.shop.example` for
 * `www.shop.example`) is refused too; `SITE_SETTINGS_ANY_HOST` lifts this for mirrors, robots.txt
 * and pings. `GSC_PROPERTY` must always be a property the site's origin belongs to.
 */
import { fillTemplate } from "../config/notify.ts";
import { listVar } from "../config/variable.ts";

/** A setting refused: which, and why (never its value). */
export interface HostProblem {
  setting: string;
  rule: string;
}

/** The site's own domain: its host without a leading `www.` (port dropped). */
const ownDomain = (origin: string): string => new URL(origin).hostname.replace(/^www\./, "");

/** Whether `hostname` is `domain` or under it. */
const within = (hostname: string, domain: string): boolean => hostname === domain || hostname.endsWith(`.${domain}`);

/** The hostname of a URL (template filled for the site); null when it is no URL (the variable's own rule says so). */
function hostnameOf(url: string): string | null {
  try {
    return new URL(url).hostname;
  } catch {
    return null;
  }
}

/** The URLs a setting names, its templates filled for the site at `origin`. */
function urlsOf(setting: string, value: string, origin: string): string[] {
  switch (setting) {
    case "MIRROR_SITEMAPS":
      return listVar(value);
    case "ROBOTS_ORIGIN_URL":
      return value === "none" ? [] : [fillTemplate(value, origin)];
    case "PING_URLS":
      return listVar(value).map((t) => fillTemplate(t.replaceAll("{sitemap}", "x"), origin));
    default:
      return [];
  }
}

/** The settings that name hosts, held to the site's own domain. */
export const HOST_SETTINGS = ["MIRROR_SITEMAPS", "ROBOTS_ORIGIN_URL", "PING_URLS"] as const;

/** Whether the Search Console property `property` (a template, filled for the site) holds the site at `origin`. */
function propertyHolds(property: string, origin: string): boolean {
  const filled = fillTemplate(property, origin);
  if (filled.startsWith("sc-domain:")) {
    // A domain property holds every host under it: one above the site's own domain holds other registrants' sites.
    const domain = filled.slice("sc-domain:".length).toLowerCase();
    return within(new URL(origin).hostname, domain) && within(domain, ownDomain(origin));
  }
  try {
    const url = new URL(filled);
    return url.origin === origin && url.pathname === "/" && url.search === "" && url.hash === "";
  } catch {
    return false;
  }
}

/** What is wrong with the hosts `settings` name for the site at `origin`; `anyHost`: SITE_SETTINGS_ANY_HOST. */
export function hostProblems(origin: string, settings: Readonly<Record<string, string>>, anyHost: boolean): HostProblem[] {
  const problems: HostProblem[] = [];
  const domain = ownDomain(origin);
  if (!anyHost) {
    for (const setting of HOST_SETTINGS) {
      const value = settings[setting];
      if (value === undefined) continue;
      const foreign = urlsOf(setting, value, origin).some((url) => {
        const host = hostnameOf(url);
        return host !== null && !within(host, domain);
      });
      if (foreign)
        problems.push({ setting, rule: `must name hosts of the site's own domain (${domain} or under it) unless SITE_SETTINGS_ANY_HOST is on` });
    }
  }
  const property = settings["GSC_PROPERTY"];
  if (property !== undefined && !propertyHolds(property, origin)) {
    problems.push({
      setting: "GSC_PROPERTY",
      rule: "must be a property the site belongs to: its origin followed by /, or sc-domain: of its own domain or a domain between that and its host",
    });
  }
  return problems;
}
