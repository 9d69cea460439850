import { HTTPException } from "hono/http-exception";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError } from "../config.ts";
import { factory } from "./app-env.ts";
import { onError, onNotFound } from "./errors.ts";

function appThrowing(err: unknown) {
  const app = factory.createApp();
  app.onError(onError);
  app.notFound(onNotFound);
  app.get("/", () => {
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

  it("answers a bad configuration with a 500 naming the variable and the rule", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const err = new ConfigError("CACHE_MAX_AGE", "must be a whole number of seconds");
    const res = await appThrowing(err).request("/");
    expect(res.status).toBe(500);
    expect(res.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(await res.text()).toBe(`${err.message}\n`);
    expect(err.message).toContain("CACHE_MAX_AGE");
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
