/**
 * Settings of a registered site that name hosts (docs/tenants.md "Settings that name hosts"): the
 * Worker fetches mirrored sitemaps and robots.txt from them and pings them, and Search Console is
 * read and written with the platform's one service account, so a tenant naming another's host would
 * make the platform fetch, ping or submit on its behalf. Each URL such a setting makes the Worker
 * fetch is built here by the very functions the jobs build it with, and must reach a host the site
 * owns (src/registry/own-host.ts: its registrable domain, siblings and subdomains included);
 * `SITE_SETTINGS_ANY_HOST` lifts this for mirrors, robots.txt and pings. `GSC_PROPERTY` must always
 * be a property the site's origin belongs to and that holds no host SITES serves. A host SITES serves
 * is the platform's, never a registered site's own, even under the site's registrable domain (a
 * platform giving tenants hosts under its own domain). Checked when settings are written, and again each
 * time a site's services are wired (src/registry/settings.ts), so a setting stored while the
 * deployment allowed more turns its feature off once it no longer does.
 */
import { ConfigError } from "../config/error.ts";
import { fillTemplate, pingUrl } from "../config/notify.ts";
import { readVariable } from "../config/variable.ts";
import { GSC_PROPERTY, MIRROR_SITEMAPS, PING_URLS, ROBOTS_ORIGIN_URL } from "../config/variables/index.ts";
import { indexUrls } from "../notify/index-urls.ts";
import { ownHosts, owns, reachesOwnHost, siteHost, within } from "./own-host.ts";

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
 * `platform` (the hosts SITES serves: that property would read the platform's site and every tenant under it).
 */
function propertyHolds(property: string, origin: string, platform: ReadonlySet<string>): boolean {
  const filled = fillTemplate(property, origin);
  if (filled.startsWith("sc-domain:")) {
    const domain = filled.slice("sc-domain:".length).toLowerCase();
    return within(siteHost(origin), domain) && owns(origin, domain) && ![...platform].some((host) => within(host, domain));
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

/**
 * What is wrong with the hosts `settings` name for the site at `origin`; `anyHost`: SITE_SETTINGS_ANY_HOST;
 * `platform`: the hosts SITES serves (src/registry/own-host.ts `platformHosts`).
 */
export function hostProblems(origin: string, settings: Readonly<Record<string, string>>, anyHost: boolean, platform: ReadonlySet<string>): HostProblem[] {
  const problems: HostProblem[] = [];
  if (!anyHost) {
    for (const setting of HOST_SETTINGS) {
      const value = settings[setting];
      if (value === undefined || fetchedUrls(setting, value, origin).every((url) => reachesOwnHost(url, origin, platform))) continue;
      problems.push({
        setting,
        rule: `must name http(s) URLs without userinfo on the site's own domain (${ownHosts(origin)}), not a host SITES serves, unless SITE_SETTINGS_ANY_HOST is on`,
      });
    }
  }
  const value = settings["GSC_PROPERTY"];
  const property = value === undefined ? null : propertyOf(value);
  if (property !== null && !propertyHolds(property, origin, platform)) {
    problems.push({
      setting: "GSC_PROPERTY",
      rule: "must be a property the site belongs to: its origin followed by /, or sc-domain: of a domain between its host and its registrable domain holding no host SITES serves",
    });
  }
  return problems;
}
