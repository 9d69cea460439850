/**
 * Local HTTP plumbing of the Chromium suites: listening on a fixed loopback port, closing, and a
 * proxy that forwards every request unchanged (Host included) to the Worker, so the Worker sees
 * the site's origin (the proxy's port is part of it).
 */
import { type IncomingHttpHeaders, type Server, createServer, request } from "node:http";

export function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
}

export const close = (server: Server | undefined): Promise<void> => new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));

/** Forwards to `target()` (read per request: the Worker starts after the proxy's port is known). */
export function forwardingProxy(target: () => URL): Server {
  return createServer((req, res) => {
    const { hostname, port } = target();
    const upstream = request({ host: hostname, port, path: req.url, method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers as IncomingHttpHeaders);
      up.pipe(res);
    });
    upstream.on("error", (error) => res.destroy(error));
    req.pipe(upstream);
  });
}
