/**
 * robots.txt in /sitemap-admin/status: where the site's file is fetched from, and a loop (the fetch
 * came back into this Worker, src/http/robots/loop.ts) as the configuration problem it is. A loop is
 * shown from the first request that hit it until an origin answers again or a week passes
 * (src/http/robots/loop-record.ts); it is recorded only where the SNAPSHOTS binding exists, and
 * `unknown` says when it cannot be told.
 */
import { fillTemplate } from "../config/notify.ts";
import type { Config } from "../config.ts";
import type { RobotsLoopStore } from "./loop-store.ts";

const LOOP_PROBLEM =
  "the robots.txt fetch came back into this Worker: set ROBOTS_ORIGIN_URL to the origin server's own robots.txt (or none); until then /robots.txt answers its last good copy, else 503";

/** The URL without query or fragment, which might hold a token. */
function shown(url: string): string {
  const u = URL.parse(url);
  return u === null ? "(unparseable URL)" : `${u.origin}${u.pathname}`;
}

async function lastLoop(store: RobotsLoopStore | null, origin: string): Promise<{ loop: "none" | "seen" | "unknown"; lastSeen: number | null }> {
  if (store === null) return { loop: "unknown", lastSeen: null };
  try {
    const lastSeen = await store.lastSeen(origin);
    return { loop: lastSeen === null ? "none" : "seen", lastSeen };
  } catch (error) {
    console.warn(`status: reading the robots.txt loop record of ${origin} failed: ${String(error)}`);
    return { loop: "unknown", lastSeen: null };
  }
}

export async function robotsStatus(store: RobotsLoopStore | null, config: Config, origin: string) {
  const template = config.notify.robots.originUrl;
  const { loop, lastSeen } = await lastLoop(store, origin);
  return {
    originUrl: template === null ? null : shown(fillTemplate(template, origin)),
    loop,
    loopLastSeenAt: lastSeen === null ? null : new Date(lastSeen).toISOString(),
    problem: loop === "seen" ? LOOP_PROBLEM : null,
  };
}
