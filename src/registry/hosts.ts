/**
 * Settings of a registered site that name hosts (docs/tenants.md "Settings that name hosts"): the
 * Worker fetches mirrored sitemaps and robots.txt from them and pings them, and Search Console is
 * read and written with the platform's one service account, so a tenant naming another's host would
 * make the platform fetch, ping or submit on its behalf. Each URL such a setting makes the Worker
 * fetch is built here by the very functions the jobs build it with, and must reach a host the site
 * owns (src/registry/own-host.ts: its registrable domain, siblings and subdomains included);
 * `SITE_SETTINGS_ANY_HOST` lifts this for mirrors, robots.txt and pings. `GSC_PROPERTY` must always
 * be a property the site's origin belongs to and that holds no other site's host. Another site's
 * host — one SITES serves (the platform's) or another registered site's (another tenant's) — is never
 * a registered site's own, even under the site's registrable domain (a platform giving tenants hosts
 * under its own domain, or tenants `a.example.com` and `b.example.com`). Checked when settings are
 * written, and again each time a site's services are wired (src/registry/settings.ts), so a setting
 * stored while the deployment allowed more (or before another site took the host it names) turns its
 * feature off once it no longer does.
 */
import { ConfigError } from "../config/error.ts";
import { fillTemplate, pingUrl } from "../config/notify.ts";
import { readVariable } from "../config/variable.ts";
import { GSC_PROPERTY, MIRROR_SITEMAPS, PING_URLS, ROBOTS_ORIGIN_URL } from "../config/variables/index.ts";
import { indexUrls } from "../notify/index-urls.ts";
import { type TakenHosts, ownHosts, owns, reachesOwnHost, siteHost, within } from "./own-host.ts";

/** A setting refused: which, and why (never its value). */
export interface HostProblem {
  setting: string;
  rule: string;
}

/** The settings that name hosts the Worker fetches, held to the site's own domain. */
export const HOST_SETTINGS = ["MIRROR_SITEMAPS", "ROBOTS_ORIGIN_URL", "PING_URLS"] as const;

/**
 * The URLs the Worker fetches for `setting` of the site at `origin`: the value read by its
 * variable's declaration, as src/config/parse.ts reads it, then built as the mirror job, the
 * robots.txt route and the pings build them. None when the value does not read (its own rule says so).
 */
function fetchedUrls(setting: (typeof HOST_SETTINGS)[number], value: string, origin: string): readonly string[] {
  const env = { [setting]: value };
  try {
    switch (setting) {
      case "MIRROR_SITEMAPS":
        return readVariable(env, MIRROR_SITEMAPS);
      case "ROBOTS_ORIGIN_URL": {
        const template = readVariable(env, ROBOTS_ORIGIN_URL);
        return template === null ? [] : [fillTemplate(template, origin)];
      }
      case "PING_URLS":
        return readVariable(env, PING_URLS).flatMap((template) => indexUrls(origin).map((index) => pingUrl(template, origin, index)));
    }
  } catch (error) {
    if (error instanceof ConfigError) return [];
    throw error;
  }
}

/**
 * Whether the Search Console property `property` (as read, filled for the site as Search Console is
 * called with it) holds the site at `origin` and no other registrant's: the origin followed by `/`,
 * or `sc-domain:` of a domain between the site's host and its registrable domain that holds none of
 * `taken` (other sites' hosts: that property would read the platform's site, or another tenant's).
 */
function propertyHolds(property: string, origin: string, taken: TakenHosts): boolean {
  const filled = fillTemplate(property, origin);
  if (filled.startsWith("sc-domain:")) {
    const domain = filled.slice("sc-domain:".length).toLowerCase();
    if (!within(siteHost(origin), domain) || !owns(origin, domain)) return false;
    for (const host of taken) if (within(host, domain)) return false;
    return true;
  }
  try {
    return new URL(filled).href === `${origin}/`;
  } catch {
    return false;
  }
}

/** The property `GSC_PROPERTY` names (its default when empty); null when it does not read (its own rule says so). */
function propertyOf(value: string): string | null {
  try {
    return readVariable({ GSC_PROPERTY: value }, GSC_PROPERTY);
  } catch (error) {
    if (error instanceof ConfigError) return null;
    throw error;
  }
}

/** Whether `settings` hold a setting that names hosts: only such a site's wiring depends on which hosts other sites have. */
export const namesHosts = (settings: Readonly<Record<string, string>>): boolean =>
  HOST_SETTINGS.some((setting) => Object.hasOwn(settings, setting)) || Object.hasOwn(settings, "GSC_PROPERTY");

/**
 * What is wrong with the hosts `settings` name for the site at `origin`; `anyHost`: SITE_SETTINGS_ANY_HOST;
 * `taken`: the other sites' hosts, SITES' and registered (src/registry/own-host.ts `takenHosts`).
 */
export function hostProblems(origin: string, settings: Readonly<Record<string, string>>, anyHost: boolean, taken: TakenHosts): HostProblem[] {
  const problems: HostProblem[] = [];
  if (!anyHost) {
    for (const setting of HOST_SETTINGS) {
      const value = settings[setting];
      if (value === undefined || fetchedUrls(setting, value, origin).every((url) => reachesOwnHost(url, origin, taken))) continue;
      problems.push({
        setting,
        rule: `must name http(s) URLs without userinfo on the site's own domain (${ownHosts(origin)}), not another site's host (one SITES serves or another registered site's), unless SITE_SETTINGS_ANY_HOST is on`,
      });
    }
  }
  const value = settings["GSC_PROPERTY"];
  const property = value === undefined ? null : propertyOf(value);
  if (property !== null && !propertyHolds(property, origin, taken)) {
    problems.push({
      setting: "GSC_PROPERTY",
      rule: "must be a property the site belongs to: its origin followed by /, or sc-domain: of a domain between its host and its registrable domain holding no other site's host",
    });
  }
  return problems;
}
