/**
 * Raw HTTP on loopback with node:http: no content decoding (the wire bytes are what we see), any
 * Host header (fetch() forbids setting it), and an honest account of broken transfers: `complete`
 * is false when the connection ended before the body did.
 */
import { Agent, request as httpRequest } from "node:http";
import { gunzipSync } from "node:zlib";

export interface WireResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Bytes exactly as they came off the socket (no content decoding). */
  body: Buffer;
  /** The body ended properly (chunked terminator / Content-Length reached). */
  complete: boolean;
  /** Socket or parser error, if the exchange failed. */
  error?: string;
}

export interface SendOptions {
  method?: string;
  path: string;
  /** Host header; default `localhost:<port>` (the served site). */
  host?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body chunked (no Content-Length). */
  chunked?: boolean;
  /**
   * Declare this Content-Length but send only `body` and wait for the answer: a server that refuses
   * a declared size answers without reading the rest (the connection is closed afterwards).
   */
  declaredLength?: number;
  timeoutMs?: number;
}

/** Requests sent by this test file (for the summary). */
export const traffic = { requests: 0 };

// A fresh connection per request: a restarted Worker never meets a stale keep-alive socket.
const agent = new Agent({ keepAlive: false });

export function send(port: number, options: SendOptions): Promise<WireResponse> {
  traffic.requests++;
  return new Promise((resolve) => {
    const headers: Record<string, string> = { host: options.host ?? `localhost:${port}`, ...options.headers };
    if (options.declaredLength !== undefined) headers["content-length"] = String(options.declaredLength);
    else if (options.body !== undefined && !options.chunked) headers["content-length"] = String(Buffer.byteLength(options.body));
    let settled = false;
    const done = (response: WireResponse): void => {
      if (!settled) {
        settled = true;
        resolve(response);
      }
    };
    const req = httpRequest(
      { host: "127.0.0.1", port, path: options.path, method: options.method ?? "GET", headers, agent, timeout: options.timeoutMs ?? 60_000 },
      (res) => {
        const chunks: Buffer[] = [];
        const result = (error?: string): WireResponse => ({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          complete: res.complete,
          ...(error ? { error } : {}),
        });
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          done(result());
          if (options.declaredLength !== undefined) req.destroy();
        });
        res.on("error", (err) => done(result(String(err))));
        res.on("close", () => done(result(res.complete ? undefined : "connection closed before the body ended")));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (err) => done({ status: 0, headers: {}, body: Buffer.alloc(0), complete: false, error: String(err) }));
    if (options.body !== undefined) req.write(options.body);
    if (options.declaredLength === undefined) req.end();
  });
}

export function get(port: number, path: string, headers: Record<string, string> = {}, host?: string): Promise<WireResponse> {
  return send(port, { path, headers, ...(host ? { host } : {}) });
}

/** The document bytes of a response: gunzipped when gzip-encoded or a `.gz` file. */
export function documentBytes(res: WireResponse): Buffer {
  const gzipped = res.headers["content-encoding"] === "gzip" || res.headers["content-type"] === "application/gzip";
  return gzipped ? gunzipSync(res.body) : res.body;
}

/** Header value as one string. */
export function header(res: WireResponse, name: string): string | undefined {
  const value = res.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(", ") : value;
}
