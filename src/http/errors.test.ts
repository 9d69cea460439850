import { HTTPException } from "hono/http-exception";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError } from "../config.ts";
import { ManifestPendingError } from "../sitemaps.ts";
import { DatabaseListError } from "../store/errors.ts";
import { factory } from "./app-env.ts";
import { onError, onNotFound } from "./errors.ts";

function appThrowing(err: unknown, path = "/") {
  const app = factory.createApp();
  app.onError(onError);
  app.notFound(onNotFound);
  app.get(path, () => {
    throw err;
  });
  return app;
}

describe("onError", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("lets an HTTPException render itself", async () => {
    const res = await appThrowing(new HTTPException(418, { res: Response.json({ error: "teapot" }, { status: 418 }) })).request("/");
    expect(res.status).toBe(418);
    expect(await res.json()).toEqual({ error: "teapot" });
  });

  it("answers a bad core configuration with a 503 + Retry-After that names nothing, and logs the variable and rule", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const err = new ConfigError("CACHE_MAX_AGE", "must be a whole number of seconds");
    const res = await appThrowing(err).request("/");
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("300");
    expect(res.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const body = await res.text();
    expect(body).toBe("503 Service Unavailable\n");
    expect(body).not.toMatch(/CACHE_MAX_AGE|configuration/);
    expect(log).toHaveBeenCalledWith(err.message);
  });

  it("answers a manifest still being built with a 503 + Retry-After that names nothing of the site", async () => {
    const res = await appThrowing(new ManifestPendingError("the manifest of https://e.example is being built")).request("/");
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("120");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(await res.text()).toBe("503 Service Unavailable: this sitemap is being built; retry later\n");
  });

  it("answers a database list that does not match a site's partitions with a 503 naming nothing, and the admin API with one naming SITE_DATABASES", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const err = new DatabaseListError("SITE_DATABASES for https://e.example lists DB_3 second, …");
    const res = await appThrowing(err, "/sitemap.xml").request("/sitemap.xml");
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("300");
    expect(await res.text()).toBe("503 Service Unavailable\n");
    expect(log).toHaveBeenCalledWith(err.message);
    const adminRes = await appThrowing(err, "/sitemap-admin/urls").request("/sitemap-admin/urls");
    expect(adminRes.status).toBe(503);
    expect(adminRes.headers.get("Retry-After")).toBe("300");
    expect(await adminRes.json()).toEqual({ error: "database_list", message: `${err.message}; nothing was done` });
  });

  it("logs anything else and answers a bare 500", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const res = await appThrowing(new Error("secret detail")).request("/");
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("500 Internal Server Error\n");
    expect(log).toHaveBeenCalledWith("unhandled error", expect.any(Error));
  });

  it("answers unknown paths with the 404 of no such sitemap path", async () => {
    const res = await appThrowing(null).request("/nowhere");
    expect(res.status).toBe(404);
    expect(await res.text()).toBe("404 Not Found: no such sitemap path\n");
  });
});
