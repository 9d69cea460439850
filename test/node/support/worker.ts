/**
 * Runs the real Worker (wrangler.jsonc, real workerd, local D1/KV/Cache in fresh storage) from
 * Node through wrangler's test harness, for tests that need Node-side tools: xmllint, raw sockets.
 */
import { request as httpRequest } from "node:http";
import { createTestHarness, type TestHarness } from "wrangler";
import { parseConfig } from "../../../src/config.ts";
import { validateBatch } from "../../../src/core/validate.ts";
import { D1RecordWriter } from "../../../src/adapters/d1/writer.ts";

export interface RunningWorker {
  harness: TestHarness;
  url: URL;
  env: Env;
  /** Validates and writes records through the Worker's own writer (all-or-nothing batch). */
  seed(records: readonly unknown[], now?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWorker(vars: Record<string, string> = {}): Promise<RunningWorker> {
  const harness = createTestHarness({ workers: [{ configPath: "./wrangler.jsonc", vars }] });
  try {
    const { url } = await harness.listen();
    const worker = harness.getWorker<Env>();
    await worker.applyD1Migrations("DB");
    const env = await worker.getEnv();
    const config = parseConfig({ ...env, ...vars } as unknown as Record<string, unknown>);
    return {
      harness,
      url,
      env,
      async seed(records, now = Date.now()) {
        const valid = validateBatch(records, { sites: config.sites, defaultSection: config.defaultSection });
        await new D1RecordWriter(env.DB).upsert(valid, now);
      },
      close: () => harness.close(),
    };
  } catch (error) {
    await harness.close();
    throw error;
  }
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes exactly as they came off the socket (no content decoding). */
  body: Buffer;
}

/** A GET with node:http, which never decodes Content-Encoding: what is on the wire is what we see. */
export function rawGet(url: URL | string, headers: Record<string, string> = {}, hostHeader?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, method: "GET", headers: { ...headers, ...(hostHeader ? { host: hostHeader } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}
