/**
 * `/sitemap-admin/sites`: the platform API (docs/tenants.md "The platform API"). Registers,
 * reads, lists, updates and deletes the sites kept as data (src/registry/store.ts), and rotates a
 * site's own admin token (src/registry/token.ts: shown once, only its hash kept).
 *
 * Only the platform credential calls it (`platformOnly`): the ADMIN_TOKEN bearer or an Access
 * service token. A site's own token, the session cookie and a person's Access JWT get 403; the
 * browser guard already refuses the last two before this (src/admin/auth/browser-guard.ts: a
 * browser reads only the dashboard and status). Writes are audited like every admin write
 * (src/admin/audit.ts), in the trail of the host the request was sent to.
 *
 * The variables win for the sites they name: a host SITES serves cannot be registered, whatever its
 * scheme or port (409); an origin registered before SITES named it is not listed here, and its
 * `{host}` routes answer 409 naming SITES (its purge would delete the records SITES' site holds). A
 * site is addressed by its host (`URL.host`, port included): `https://` is tried first, then
 * `http://`. A host names one site: registering it under another scheme or port is refused
 * (atomically, src/adapters/d1/site-registry.ts), and its one trailing dot is dropped.
 */
import type { RouteHandler } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { ConfigError, loadConfig } from "../config.ts";
import { normalizeOrigin } from "../core/url.ts";
import type { AppEnv } from "../http/app-env.ts";
import { REGISTRY_TARGET } from "../jobs/messages.ts";
import { currentMeter } from "../jobs/meter.ts";
import { siteHost } from "../registry/own-host.ts";
import { DATABASE_SETTING, type SettingProblem, settingsProblems } from "../registry/settings.ts";
import type { RegisteredSite, SiteRegistry, SiteSettings } from "../registry/store.ts";
import { newSiteToken, tokenHash } from "../registry/token.ts";
import { registeredServices, registryResolver, services, siteRegistry } from "../services.ts";
import { onPlatformHost } from "./auth.ts";
import { leaveDatabase } from "./database-change.ts";
import { AdminError } from "./errors.ts";
import type { HealthItem } from "./health.ts";
import { jsonResponse } from "./json.ts";
import type { deleteSite, getSite, listSites, patchSite, postSite, postSiteToken } from "./routes.ts";
import { HEALTH_PAGE, type SiteBody } from "./schemas.ts";
import { siteStatus } from "./status.ts";

type Ctx = Context<AppEnv>;

const DEFAULT_PAGE = 50;

/**
 * Every `/sites` route: the platform credential only. Also turns the validator's plain-text
 * refusals of a body (400 not JSON, 415 not sent as JSON) into the API's JSON errors.
 */
export const platformOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  // The platform API lives on the platform's hosts (SITES origins) only: on a tenant's host it does not exist.
  if (!onPlatformHost(c)) throw new AdminError(404, { error: "not_found", message: "the platform API is served on the platform's hosts only" });
  const via = c.var.principal?.via;
  if (via !== "token" && via !== "access-service") {
    throw new AdminError(403, {
      error: "forbidden",
      message: "the platform API takes the platform credential only: the ADMIN_TOKEN bearer token or an Access service token",
    });
  }
  await next();
  if (c.error instanceof HTTPException && !(c.error instanceof AdminError)) {
    if (c.error.status === 400) c.res = new AdminError(400, { error: "invalid_body", message: "the request body is not JSON" }).getResponse();
    if (c.error.status === 415) {
      c.res = new AdminError(415, { error: "unsupported_media_type", message: "the request body is JSON: Content-Type: application/json" }).getResponse();
    }
  }
};

function registryOf(c: Ctx): SiteRegistry {
  const registry = siteRegistry(c.env);
  if (registry === null) throw new AdminError(503, { error: "unavailable", message: "the site registry needs the DB (D1) binding" });
  return registry;
}

/** http is for local use only: loopback addresses and the names RFC 2606 and RFC 6761 keep for it. */
function localHost(hostname: string): boolean {
  return (
    hostname === "localhost" ||
    hostname.endsWith(".localhost") ||
    hostname.endsWith(".test") ||
    hostname === "[::1]" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}

/**
 * `origin` without its host's one trailing dot: `https://h.example.` reaches the host `https://h.example`
 * does, yet URL.origin keeps the dot; registered as given it would be a twin of that site.
 */
function withoutTrailingDot(origin: string): string | null {
  const url = new URL(origin);
  return url.hostname.endsWith(".") ? normalizeOrigin(`${url.protocol}//${url.hostname.slice(0, -1)}${url.port === "" ? "" : `:${url.port}`}`) : origin;
}

/** The origin a registration names (as URL.origin gives it, its host without a trailing dot), or 400 saying what is wrong; never echoes the input. */
function registrableOrigin(raw: string): string {
  const given = normalizeOrigin(raw.trim());
  const origin = given === null ? null : withoutTrailingDot(given);
  if (origin === null) {
    throw new AdminError(400, {
      error: "invalid_origin",
      message: "origin must be exactly scheme://host[:port] (https or http): no path, query, fragment or credentials",
    });
  }
  if (origin.startsWith("http:") && !localHost(new URL(origin).hostname)) {
    throw new AdminError(400, {
      error: "invalid_origin",
      message: "origin must use https; http only for loopback addresses, localhost, *.localhost and *.test (local use)",
    });
  }
  return origin;
}

function refusedSettings(problems: readonly SettingProblem[]): AdminError {
  const names = [...new Set(problems.map((p) => p.setting))];
  return new AdminError(400, {
    error: "invalid_settings",
    message: `${names.length === 1 ? "a setting is" : `${names.length} settings are`} refused: ${names.join(", ")}; nothing was written`,
    problems: problems.map((p) => ({ setting: p.setting, rule: p.rule })),
  });
}

const notFound = (host: string): AdminError =>
  new AdminError(404, { error: "not_found", message: `no registered site at ${host.slice(0, 300)} (never registered, deleted, or configured by SITES)` });

const configuredBySites = (origin: string): AdminError =>
  new AdminError(409, {
    error: "configured_by_sites",
    message: `${origin} is configured by SITES: the variables win for the sites they name, so the platform API neither reads, changes nor deletes it (remove it from SITES and deploy first)`,
  });

/**
 * The live registered site at `host` (https first, then http), or 404; 409 when the origin is one
 * SITES serves (registered before SITES named it): its settings, token and purge are not the
 * registry's to touch, since its records are now SITES' site's.
 */
async function liveSite(c: Ctx, registry: SiteRegistry, host: string): Promise<RegisteredSite> {
  const sites = loadConfig(c.env).sites;
  const origins = ["https", "http"].map((scheme) => normalizeOrigin(`${scheme}://${host}`)).filter((o): o is string => o !== null);
  for (const origin of origins) {
    const site = await registry.get(origin);
    if (site === null || site.deletedAt !== null) continue;
    if (sites.has(site.origin)) throw configuredBySites(site.origin);
    return site;
  }
  const configured = origins.find((origin) => sites.has(origin));
  if (configured !== undefined) throw configuredBySites(configured);
  throw notFound(host);
}

/** A write's time, after the record's last: each isolate rereads a site whose update time moved (src/registry/resolve.ts). */
const writeTime = (site: RegisteredSite): number => Math.max(Date.now(), site.updatedAt + 1);

const iso = (ms: number): string => new Date(ms).toISOString();

function siteBody(site: RegisteredSite): SiteBody {
  return {
    origin: site.origin,
    host: new URL(site.origin).host,
    settings: { ...site.settings },
    createdAt: iso(site.createdAt),
    updatedAt: iso(site.updatedAt),
  };
}

/**
 * The live registered sites' hosts, as this isolate lists them (read again first when older than
 * MANIFEST_CACHE_TTL): settings may name none of them but the site's own (src/registry/hosts.ts). A
 * site registered elsewhere since is caught at use, once every isolate's list has it.
 */
async function registeredHosts(c: Context<AppEnv>): Promise<ReadonlySet<string>> {
  return (await registryResolver(c.env)?.currentHosts(Date.now()))?.hosts ?? new Set();
}

export const registerSite: RouteHandler<typeof postSite, AppEnv> = async (c) => {
  const registry = registryOf(c);
  const body = c.req.valid("json");
  const origin = registrableOrigin(body.origin);
  const config = loadConfig(c.env);
  // Registered sites keep their records and manifests in D1: the purge of a deleted one (src/jobs/site-purge.ts) removes D1 rows and snapshots.
  if (config.urlSource !== "d1" || config.manifestStore !== "d1") {
    throw new AdminError(409, {
      error: "not_supported",
      message: "registered sites keep their records and manifests in D1: this deployment has URL_SOURCE or MANIFEST_STORE set to kv",
    });
  }
  // Any scheme or port: a host SITES serves names one site, whose sessions (cookies ignore ports) and records a registered twin must never share.
  const host = siteHost(origin);
  const configured = [...config.sites].find((o) => siteHost(o) === host) ?? null;
  if (configured !== null) {
    throw new AdminError(409, {
      error: "site_exists",
      message: `${configured} is configured by SITES: the variables win for the sites they name, so its host cannot be registered (remove it from SITES and deploy first)`,
    });
  }
  const settings: SiteSettings = body.settings ?? {};
  const problems = settingsProblems(c.env, origin, settings, await registeredHosts(c));
  if (problems.length > 0) throw refusedSettings(problems);
  const token = newSiteToken();
  const now = Date.now();
  const site: RegisteredSite = { origin, settings, tokenHash: await tokenHash(token), createdAt: now, updatedAt: now, deletedAt: null };
  // Inserted only where no site is registered at its host (any scheme or port), in one statement: of concurrent registrations one wins.
  if (!(await registry.create(site))) {
    const existing = await registry.atHost(host);
    const message =
      existing === null || existing.origin === origin
        ? existing?.deletedAt != null
          ? `${origin} is being deleted: register it again once its data is removed`
          : `${origin} is registered already (its token can be rotated: POST /sitemap-admin/sites/{host}/token)`
        : `${existing.origin} is registered at the same host${existing.deletedAt === null ? "" : " (being deleted)"}: a host names one site, whatever its scheme or port`;
    throw new AdminError(409, { error: "site_exists", message });
  }
  // This isolate serves it at once; every other one once its list of sites is older than the TTL (src/registry/resolve.ts).
  registryResolver(c.env)?.remember(site);
  const servesEverywhereBy = iso(now + config.cache.manifestTtl * 1000);
  return jsonResponse({ site: siteBody(site), token, servesEverywhereBy }, 201);
};

/** A registered site's health (src/admin/health.ts), from its status as its own dashboard reads it; a site whose settings no longer read is one red problem. */
async function siteHealth(c: Context<AppEnv>, site: RegisteredSite): Promise<NonNullable<SiteBody["health"]>> {
  let problems: HealthItem[];
  try {
    problems = (await siteStatus(registeredServices(c.env, site), site.origin)).health;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems = [
      {
        level: "red",
        topic: "configuration",
        message: `its setting ${error.variable} ${error.rule}: the site answers 503`,
        action: "PATCH its settings.",
      },
    ];
  }
  return {
    red: problems.filter((p) => p.level === "red").length,
    amber: problems.filter((p) => p.level === "amber").length,
    problems: problems.slice(0, 3),
  };
}

/** A site's body with its health. */
type WithHealth = SiteBody & { health: NonNullable<SiteBody["health"]> };

/**
 * Service calls a page of sites' health spends before it takes on no further site: a site's status
 * is ~20 queries whatever its configuration (its mirrors' and jobs' states one query each), so one
 * more site always fits in the shared 1,000 (src/jobs/meter.ts).
 */
const HEALTH_SHARE = 600;

/**
 * The health of `rows`' first `limit` sites, read one after another until the invocation's share is
 * spent; `next` is where the following page starts (the last site read), or null after the last site.
 */
export async function healthPage(
  c: Context<AppEnv>,
  rows: readonly RegisteredSite[],
  limit: number,
): Promise<{ sites: WithHealth[]; next: string | null }> {
  const sites: WithHealth[] = [];
  const page = rows.slice(0, limit);
  // Each site's settings naming hosts read as its jobs read them: against every registered site's host (this isolate's list).
  await registeredHosts(c);
  for (const [i, site] of page.entries()) {
    if (i > 0 && (currentMeter()?.serviceCalls ?? 0) >= HEALTH_SHARE) return { sites, next: page[i - 1]!.origin };
    sites.push({ ...siteBody(site), health: await siteHealth(c, site) });
  }
  return { sites, next: rows.length > limit ? page.at(-1)!.origin : null };
}

export const readSites: RouteHandler<typeof listSites, AppEnv> = async (c) => {
  const registry = registryOf(c);
  const query = c.req.valid("query");
  const withHealth = query.health === "true";
  if (withHealth && query.limit !== undefined && query.limit > HEALTH_PAGE) {
    throw new AdminError(400, { error: "invalid_query", message: `with health=true a page holds at most ${HEALTH_PAGE} sites (each is its status read)` });
  }
  const limit = query.limit ?? (withHealth ? HEALTH_PAGE : DEFAULT_PAGE);
  // One more than asked: whether there is a next page, without a query that finds it empty.
  // An origin registered before SITES named it is SITES' site now: not listed (the variables win).
  const rows = await registry.page(query.after ?? null, limit + 1, query.contains?.toLowerCase() ?? null, [...loadConfig(c.env).sites]);
  if (withHealth) return jsonResponse(await healthPage(c, rows, limit), 200);
  const sites = rows.slice(0, limit);
  return jsonResponse({ sites: sites.map(siteBody), next: rows.length > limit ? sites.at(-1)!.origin : null }, 200);
};

export const readSite: RouteHandler<typeof getSite, AppEnv> = async (c) => {
  const site = await liveSite(c, registryOf(c), c.req.valid("param").host);
  return jsonResponse(siteBody(site), 200);
};

export const updateSite: RouteHandler<typeof patchSite, AppEnv> = async (c) => {
  const registry = registryOf(c);
  const { host } = c.req.valid("param");
  const { settings } = c.req.valid("json");
  const site = await liveSite(c, registry, host);
  const problems = settingsProblems(c.env, site.origin, settings, await registeredHosts(c));
  if (problems.length > 0) throw refusedSettings(problems);
  // Records are not moved between databases: a change is refused while its database holds some, else its state there is cleared first.
  const from = site.settings[DATABASE_SETTING] ?? "DB";
  if ((settings[DATABASE_SETTING] ?? "DB") !== from) await leaveDatabase(c.env, site, from);
  const updated = await registry.update(site.origin, settings, writeTime(site));
  if (updated === null) throw notFound(host);
  // This isolate serves the new settings at once; the others when their list is next read (MANIFEST_CACHE_TTL).
  registryResolver(c.env)?.remember(updated);
  return jsonResponse(siteBody(updated), 200);
};

export const rotateSiteToken: RouteHandler<typeof postSiteToken, AppEnv> = async (c) => {
  const registry = registryOf(c);
  const { host } = c.req.valid("param");
  const site = await liveSite(c, registry, host);
  const token = newSiteToken();
  if (!(await registry.rotateToken(site.origin, await tokenHash(token), writeTime(site)))) throw notFound(host);
  return jsonResponse({ token }, 200);
};

export const removeSite: RouteHandler<typeof deleteSite, AppEnv> = async (c) => {
  const registry = registryOf(c);
  const { host } = c.req.valid("param");
  const site = await liveSite(c, registry, host);
  if (!(await registry.markDeleted(site.origin, Date.now()))) throw notFound(host);
  // This isolate stops serving it at once; the others when their list of sites is next read (MANIFEST_CACHE_TTL).
  registryResolver(c.env)?.forget(site.origin);
  // The purge's chain lives in the deployment's jobs table (DB), one per deployment: a second DELETE joins it.
  await services(c.env).jobs?.request("site-purge", REGISTRY_TARGET, 0, "delete");
  return jsonResponse({ deleted: site.origin, purge: "queued" as const }, 202);
};
