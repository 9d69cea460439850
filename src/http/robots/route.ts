/**
 * The `/robots.txt` route (the zone's second route, `example.com/robots.txt`). Registered before
 * the site middleware (src/http/app.ts), so that nothing of ours can fail before it: it resolves
 * the site itself, and any error of ours (configuration, a store, a bug) answers with the origin's
 * own robots.txt passed through (src/http/robots/pass-through.ts). A host that is not a configured
 * site gets its origin's file passed through too: the Worker is in front of it by a route, not by
 * choice, and must not change what crawlers read there.
 */
import type { Context } from "hono";
import { fillTemplate } from "../../config/notify.ts";
import { loadConfig } from "../../config.ts";
import type { Fetcher } from "../../notify/http.ts";
import { registeredServices, registryResolver, servicesFor } from "../../services.ts";
import type { AppEnv } from "../app-env.ts";
import { waitUntilOf } from "../request-context.ts";
import { ROBOTS_LOOP_HEADER, loopAnswer } from "./loop.ts";
import { passThrough } from "./pass-through.ts";
import { robotsResponse } from "./respond.ts";

/** ROBOTS_ORIGIN_TIMEOUT_MS's default: the pass-through's timeout when the configuration cannot be read. */
const DEFAULT_TIMEOUT_MS = 3000;

const fetchOrigin: Fetcher = (input, init) => fetch(input, init);

export async function robotsRoute(c: Context<AppEnv>): Promise<Response> {
  const request = c.req.raw;
  if (request.headers.has(ROBOTS_LOOP_HEADER)) return loopAnswer();
  const origin = new URL(request.url).origin;
  // What the pass-through fetches: the configured origin file once known, else this very URL
  // (on a zone route, a Worker's fetch of its own zone reaches the origin server).
  let originUrl = `${origin}/robots.txt`;
  let timeoutMs = DEFAULT_TIMEOUT_MS;
  try {
    // A site of SITES or a registered one; any other host's file passes through as the deployment's settings fetch it.
    const registered = loadConfig(c.env).sites.has(origin) ? null : await registryResolver(c.env)?.resolve(origin, Date.now(), waitUntilOf(c));
    const services = registered ? registeredServices(c.env, registered) : servicesFor(c.env, origin);
    const { robots } = services.config.notify;
    if (robots.originUrl !== null) originUrl = fillTemplate(robots.originUrl, origin);
    timeoutMs = robots.timeoutMs;
    if (!services.config.sites.has(origin)) return await passThrough(originUrl, timeoutMs, fetchOrigin);
    return await robotsResponse({
      config: services.config,
      origin,
      registeredAt: registered?.createdAt ?? null,
      fetcher: fetchOrigin,
      lastGood: services.robotsLastGood,
      loops: services.robotsLoop,
      hasFeed: services.store.recent !== null,
      waitUntil: waitUntilOf(c),
    });
  } catch (error) {
    console.error(
      `robots.txt: an internal error, the origin's answer is passed through: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
    );
    return passThrough(originUrl, timeoutMs, fetchOrigin);
  }
}
