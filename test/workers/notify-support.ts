/** Helpers for notifier tests: a fake search engine at the fetch boundary, seeding, runs. */
import { env } from "cloudflare:workers";
import { D1RecordWriter } from "../../src/adapters/d1/writer.ts";
import type { Logger } from "../../src/notify/context.ts";
import { type NotifyReport, notifyAfterRegeneration } from "../../src/notify/notifier.ts";
import { databaseServices } from "../../src/services.ts";
import { validRecords } from "./support.ts";

export interface Call {
  method: string;
  url: string;
  headers: Headers;
  body: string;
  /** The caller's abort signal (timeouts): a fake that hangs must honour it, as fetch does. */
  signal: AbortSignal | null;
}

export type Responder = (call: Call, index: number) => Response | Promise<Response>;

/** Records every outbound request and answers with `respond` (changeable between runs). */
export class FakeEngine {
  readonly calls: Call[] = [];
  respond: Responder;

  constructor(respond: Responder = () => new Response(null, { status: 200 })) {
    this.respond = respond;
  }

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const body = new TextDecoder().decode(await request.arrayBuffer());
    const call: Call = { method: request.method, url: request.url, headers: request.headers, body, signal: init?.signal ?? null };
    this.calls.push(call);
    return this.respond(call, this.calls.length - 1);
  };

  json<T>(i: number): T {
    return JSON.parse(this.calls[i]!.body) as T;
  }
}

/** An answer that never comes: rejects like fetch when the caller's signal aborts. */
export function hang(call: Call): Promise<Response> {
  return new Promise((_, reject) => call.signal?.addEventListener("abort", () => reject(call.signal!.reason)));
}

export class MemoryLog implements Logger {
  readonly lines: string[] = [];
  info = (m: string): void => void this.lines.push(`info ${m}`);
  warn = (m: string): void => void this.lines.push(`warn ${m}`);
  error = (m: string): void => void this.lines.push(`error ${m}`);
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

export function siteEnv(origin: string, vars: Record<string, string> = {}): Env {
  return { ...env, SITES: origin, ...vars } as Env;
}

export async function upsert(e: Env, inputs: readonly unknown[], now: number): Promise<void> {
  await new D1RecordWriter(e.DB).upsert(validRecords(e, inputs), now);
}

export async function remove(e: Env, locs: readonly string[], now: number): Promise<void> {
  await new D1RecordWriter(e.DB).delete(locs, now);
}

export function run(e: Env, engine: FakeEngine, now: number, log: Logger = new MemoryLog()): Promise<NotifyReport> {
  return notifyAfterRegeneration(databaseServices(e), { now, fetch: engine.fetch, log });
}

export const pages = (origin: string, n: number, from = 0): { loc: string }[] =>
  Array.from({ length: n }, (_, i) => ({ loc: `${origin}/page/${from + i}` }));

/** A service account's RSA key (PKCS#8 PEM, as in a Google key file) and its public half, to check signatures. */
export async function serviceAccountKey(): Promise<{ pem: string; publicKey: CryptoKey }> {
  const pair = (await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const der = new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer);
  const b64 = btoa(String.fromCharCode(...der));
  const pem = `-----BEGIN PRIVATE KEY-----\n${b64.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`;
  return { pem, publicKey: pair.publicKey };
}
