/**
 * Helpers of the robots.txt tests (robots.test.ts, robots-file.test.ts): a fake origin server stubbed
 * at the global fetch boundary, its answers, and a counting or failing KV for the last good copy.
 */
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { siteEnv as notifySiteEnv } from "./notify-support.ts";

/** Most cases check the index line alone; the feed's own line has its test below. */
export const siteEnv = (origin: string, vars: Record<string, string> = {}): Env => notifySiteEnv(origin, { FEED_SIZE: "0", ...vars });
/** No caching: every request asks the origin, as in the check (`ROBOTS_MAX_AGE=0`). */
export const uncached = (origin: string, vars: Record<string, string> = {}): Env => siteEnv(origin, { ROBOTS_MAX_AGE: "0", ...vars });

export interface OriginCall {
  url: string;
  headers: Headers;
  redirect: RequestInit["redirect"];
}

/** Replaces fetch with a fake origin server; returns what it was asked. */
export function fakeOrigin(answer: (url: string, init: RequestInit | undefined) => Response | Promise<Response>): OriginCall[] {
  const calls: OriginCall[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    calls.push({ url, headers: new Headers(init?.headers), redirect: init?.redirect });
    return answer(url, init);
  });
  return calls;
}

/** An answer that never comes: rejects like fetch when the caller's deadline aborts it. */
export const hang = (_: string, init: RequestInit | undefined): Promise<Response> =>
  new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason)));

export const text = (body: string, type = "text/plain") => new Response(body, { headers: { "Content-Type": type } });
export const bytes = (s: string) => new TextEncoder().encode(s);
export const str = (b: Uint8Array) => new TextDecoder().decode(b);
export const redirect = (location: string, status = 301) => new Response(null, { status, headers: { Location: location } });

export const RULES = "User-agent: *\nDisallow: /private/\nAllow: /private/help\n\nUser-agent: BadBot\nDisallow: /\n";
export const withIndex = (rules: string, origin: string) => `${rules}\nSitemap: ${origin}/sitemap.xml\n`;

/** A generated robots.txt of 756 KB (the case): numbered rule lines of 34 bytes. */
export function bigRobots(): Uint8Array {
  const lines = ["User-agent: *\n"];
  for (let i = 0; lines.length < 22_240; i++) lines.push(`Disallow: /generated/path-${String(i).padStart(6, "0")}/\n`);
  return bytes(lines.join(""));
}

/** Serves `body` in 64 KiB chunks on demand; `pulled()` says how many bytes the reader asked for. */
export function chunked(body: Uint8Array): { response: () => Response; pulled: () => number } {
  let pulled = 0;
  return {
    pulled: () => pulled,
    response: () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            if (pulled >= body.length) return controller.close();
            const chunk = body.subarray(pulled, pulled + 65_536);
            pulled += chunk.length;
            controller.enqueue(chunk);
          },
        }),
        { headers: { "Content-Type": "text/plain" } },
      ),
  };
}

/** The real SNAPSHOTS namespace, counting the robots copy's writes and optionally failing. */
export function countingKv(fail: "none" | "all" = "none"): { kv: KVNamespace; puts: () => number } {
  const real = env.SNAPSHOTS;
  let puts = 0;
  const failing = () => Promise.reject(new Error("KV GET failed: 503 service unavailable"));
  const kv = Object.create(real) as KVNamespace;
  kv.put = (async (key: string, value: ArrayBuffer, options?: KVNamespacePutOptions) => {
    puts++;
    if (fail === "all") throw new Error("KV PUT failed: 429 too many requests");
    return real.put(key, value, options);
  }) as KVNamespace["put"];
  kv.get = (fail === "all" ? failing : real.get.bind(real)) as KVNamespace["get"];
  kv.getWithMetadata = (fail === "all" ? failing : real.getWithMetadata.bind(real)) as KVNamespace["getWithMetadata"];
  kv.delete = (fail === "all" ? failing : real.delete.bind(real)) as KVNamespace["delete"];
  return { kv, puts: () => puts };
}
