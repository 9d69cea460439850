/** A registered site (`https://<prefix>-<random>.test`) with its token, written straight into the registry table of `e.DB`. */
import { expect } from "vitest";
import { D1SiteRegistry } from "../../../src/adapters/d1/site-registry.ts";
import type { RegisteredSite } from "../../../src/registry/store.ts";
import { newSiteToken, tokenHash } from "../../../src/registry/token.ts";

export async function registeredSite(
  e: Env,
  prefix: string,
  settings: Record<string, string> = {},
): Promise<{ site: RegisteredSite; origin: string; token: string }> {
  const token = newSiteToken();
  const now = Date.now();
  const site: RegisteredSite = {
    origin: `https://${prefix}-${Math.random().toString(36).slice(2, 10)}.test`,
    settings,
    tokenHash: await tokenHash(token),
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  expect(await new D1SiteRegistry(e.DB).create(site)).toBe(true);
  return { site, origin: site.origin, token };
}
