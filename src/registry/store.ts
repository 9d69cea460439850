/**
 * The site registry (issue 44, docs/tenants.md): sites as data, each with its own settings and
 * admin token, added and removed without a deploy. Kept in the D1 database bound as `DB`
 * (src/adapters/d1/site-registry.ts). Sites named by `SITES` are not in it: the variables win for
 * the sites they name, and the registry refuses to register one of them.
 */

/**
 * A registered site's settings: values of the per-site variables (src/registry/settings.ts lists
 * which), as the variables would be written, plus `DATABASE`, the D1 binding that holds it
 * (default `DB`). Validated by the same declarations as the variables.
 */
export type SiteSettings = Readonly<Record<string, string>>;

export interface RegisteredSite {
  /** `scheme://host[:port]`, as URL.origin gives it. */
  origin: string;
  settings: SiteSettings;
  /** SHA-256 (hex) of the site's admin token; the token itself is shown once and never stored. */
  tokenHash: string;
  /** Epoch ms. */
  createdAt: number;
  updatedAt: number;
  /** Set by DELETE: the site no longer serves; its data is being removed (the `site-purge` job). */
  deletedAt: number | null;
}

/**
 * A live site as each isolate lists it (src/registry/resolve.ts): whole when its settings are
 * small, else without them (`settings: null`), read on demand: the list stays a few hundred bytes a
 * site whatever the sites' settings weigh.
 */
export type ListedSite = Omit<RegisteredSite, "settings"> & { settings: SiteSettings | null };

export interface SiteRegistry {
  /** Every live site's origin and update time: what each isolate keeps to resolve a Host (one query). */
  live(): Promise<{ origin: string; updatedAt: number }[]>;
  /**
   * Every live site, its settings with it when their stored JSON is at most `settingsBytes` bytes
   * (UTF-8), else `null`: what each isolate keeps to resolve a Host, and to wire a site of small
   * settings with no further query (one query).
   */
  liveSites(settingsBytes: number): Promise<ListedSite[]>;
  /** One site, live or being deleted; null when unknown. */
  get(origin: string): Promise<RegisteredSite | null>;
  /** The live site whose token hashes to `tokenHash`; null when none. */
  byTokenHash(tokenHash: string): Promise<string | null>;
  /**
   * Registers a site; false when a site (live or being deleted) is registered at its host, whatever
   * its scheme or port (`siteHost`, src/registry/own-host.ts): atomic, so of concurrent ones one wins.
   */
  create(site: RegisteredSite): Promise<boolean>;
  /** A site (live or being deleted) registered at `host` (as `siteHost` gives it), any scheme or port; null when none. */
  atHost(host: string): Promise<RegisteredSite | null>;
  /** Replaces a live site's settings; null when there is no such live site. */
  update(origin: string, settings: SiteSettings, now: number): Promise<RegisteredSite | null>;
  /** Replaces a live site's token hash; false when there is no such live site. */
  rotateToken(origin: string, tokenHash: string, now: number): Promise<boolean>;
  /** Marks a live site deleted; false when there is no such live site. */
  markDeleted(origin: string, now: number): Promise<boolean>;
  /** Live sites in origin order after `after`, at most `limit`, whose origin contains `contains` when given, none of `except`. */
  page(after: string | null, limit: number, contains: string | null, except?: readonly string[]): Promise<RegisteredSite[]>;
  /** Sites marked deleted, oldest first, at most `limit`: what the purge still has to remove. */
  deleting(limit: number): Promise<string[]>;
  /** Removes a deleted site's row, once its data is gone. */
  remove(origin: string): Promise<void>;
}
