/** Helpers for workerd tests: call the real Worker entry with a chosen env, read bodies raw. */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import { parseConfig } from "../../src/config.ts";
import { type ValidRecord, validateBatch } from "../../src/core/validate.ts";
import worker from "../../src/index.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import type { SourceFixture } from "./fixtures/fixture.ts";

let siteCounter = 0;

/** A fresh origin per test: tests in one file share storage, sites keep them apart. */
export function freshOrigin(label = "site"): string {
  siteCounter += 1;
  return `https://${label}-${siteCounter}-${Math.random().toString(36).slice(2, 8)}.example`;
}

export async function call(env: Env, url: string, init: RequestInit = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(url, init) as Request<unknown, IncomingRequestCfProperties>, env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

export function validRecords(env: Env, inputs: readonly unknown[]): ValidRecord[] {
  const config = parseConfig(env as unknown as Record<string, unknown>);
  return validateBatch(inputs, { sites: config.sites, defaultSection: config.defaultSection });
}

export async function bytesOf(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

export async function gunzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

/** `<loc>` values of a document, entity-decoded. */
export { locsOf } from "../shared/locs.ts";

export function range(n: number, from = 0): number[] {
  return Array.from({ length: n }, (_, i) => from + i);
}

/** A new site on `fixture` with the given records, its manifest built as after a write. */
export async function seedSite(
  fixture: SourceFixture,
  label: string,
  inputs: (origin: string) => unknown[],
  vars: Record<string, string> = {},
  now = Date.UTC(2026, 0, 1),
  extraSites = "",
): Promise<{ origin: string; env: Env }> {
  const origin = freshOrigin(label);
  const env = fixture.env({ SITES: `${origin} ${extraSites}`.trim(), ...vars });
  await fixture.upsert(env, validRecords(env, inputs(origin)), now);
  await rebuildManifest(services(env), origin);
  return { origin, env };
}

/** GET that must answer 200; the body as text. */
export async function document(env: Env, url: string): Promise<string> {
  const res = await call(env, url);
  expect(res.status, url).toBe(200);
  return res.text();
}
