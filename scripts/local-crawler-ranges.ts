/**
 * `npm start -- --crawler-ranges-local`: npm start plays a verified crawler. A small HTTP server on
 * 127.0.0.1 serves IP range lists in the engines' format that hold the loopback addresses, and the
 * Worker's CRAWLER_IP_RANGES points googlebot and bingbot at it (http is accepted for loopback
 * hosts only), so a request from this machine with Googlebot's User-Agent is verified by its
 * address, as Google's own would be (docs/crawlers.md "Locally"). It lives as long as npm start.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** The lists served: this machine's loopback addresses, IPv4 and IPv6. */
export const LOCAL_RANGES = JSON.stringify({ prefixes: [{ ipv4Prefix: "127.0.0.0/8" }, { ipv6Prefix: "::1/128" }] });

const CRAWLERS = ["googlebot", "bingbot"] as const;

export interface LocalCrawlerRanges {
  /** The CRAWLER_IP_RANGES value that names the server. */
  value: string;
  /** Resolves once every crawler's list was fetched (by the Worker's `crawler-ranges` job). */
  fetched: Promise<void>;
}

/** Starts the server. */
export function serveLocalCrawlerRanges(): Promise<LocalCrawlerRanges> {
  const waiting = new Set<string>(CRAWLERS);
  let allFetched = () => {};
  const fetched = new Promise<void>((resolve) => (allFetched = resolve));
  const server = createServer((req, res) => {
    const name = CRAWLERS.find((n) => req.url === `/${n}.json`);
    res.writeHead(name ? 200 : 404, { "Content-Type": name ? "application/json" : "text/plain" });
    res.end(name ? LOCAL_RANGES : "not found");
    if (name && waiting.delete(name) && waiting.size === 0) allFetched();
  });
  server.unref();
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({ value: CRAWLERS.map((n) => `${n}=http://127.0.0.1:${port}/${n}.json`).join(" "), fetched });
    });
  });
}
