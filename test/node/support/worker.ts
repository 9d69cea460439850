/**
 * Runs the real Worker (wrangler.jsonc, real workerd, local D1/KV/Cache in fresh storage) from
 * Node through wrangler's test harness, for tests that need Node-side tools: xmllint, raw sockets.
 */
import { request as httpRequest } from "node:http";
import { fileURLToPath } from "node:url";
import { type TestHarness, createTestHarness } from "wrangler";
import { D1RecordWriter } from "../../../src/adapters/d1/writer.ts";
import { parseConfig } from "../../../src/config.ts";
import { validateBatch } from "../../../src/core/validate.ts";

export interface RunningWorker {
  harness: TestHarness;
  url: URL;
  /** Where the Worker listens, e.g. http://127.0.0.1:41234 */
  origin: string;
  env: Env;
  /** Validates and writes records through the Worker's own writer (all-or-nothing batch). */
  seed(records: readonly unknown[], now?: number): Promise<void>;
  close(): Promise<void>;
}

export interface WorkerOptions {
  secrets?: Record<string, string>;
  /**
   * Add the listening origin to SITES (known only once the harness listens), so requests sent
   * straight to the Worker's own origin, like the import CLI's admin calls, are for a configured site.
   */
  servesOwnOrigin?: boolean;
}

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export async function startWorker(vars: Record<string, string> = {}, options: WorkerOptions = {}): Promise<RunningWorker> {
  const input = { configPath: "./wrangler.jsonc", vars, ...(options.secrets ? { secrets: options.secrets } : {}) };
  const harness = createTestHarness({ root: ROOT, workers: [input] });
  try {
    let { url } = await harness.listen();
    let served = vars;
    if (options.servesOwnOrigin) {
      served = { ...vars, SITES: [vars["SITES"] ?? "", url.origin].join(" ").trim() };
      await harness.update({ root: ROOT, workers: [{ ...input, vars: served }] });
      const again = await harness.listen();
      if (again.url.origin !== url.origin) throw new Error(`the harness moved from ${url.origin} to ${again.url.origin}`);
      url = again.url;
    }
    const worker = harness.getWorker<Env>();
    await worker.applyD1Migrations("DB");
    const env = await worker.getEnv();
    const config = parseConfig({ ...env, ...served } as unknown as Record<string, unknown>);
    return {
      harness,
      url,
      origin: url.origin,
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
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: "GET",
        headers: { ...headers, ...(hostHeader ? { host: hostHeader } : {}) },
      },
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
