/**
 * The one site a mirror writes (docs/mirror.md "One site per mirror"): a remote sitemap speaks
 * for its own site only, so a CMS cannot add URLs to, or by omission remove them from, another
 * site this deployment serves.
 *
 * - The mirrored URL's origin, when that is a configured site (`https://example.com/wp-sitemap.xml`
 *   writes `https://example.com`); else a configured site on the same host (the other scheme).
 * - Otherwise (a headless CMS on a host of its own) the site of the first record the mirror ever
 *   kept, remembered from then on.
 */
export function siteOfUrl(url: string, sites: ReadonlySet<string>): string | null {
  const u = new URL(url);
  if (sites.has(u.origin)) return u.origin;
  for (const site of sites) if (new URL(site).host === u.host) return site;
  return null;
}
