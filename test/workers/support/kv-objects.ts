/**
 * Test helpers around the KV writer objects: a site's object, its status, waiting for its
 * projection, and giving the object another KV binding (a wrapper of the real one: counting,
 * failing, eventually consistent) for the rest of a test.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { type SiteWriters, type WriterStatus, writerOf } from "../../../src/adapters/kv/object-protocol.ts";
import type { KvSiteWriter } from "../../../src/adapters/kv/writer-object.ts";

export const kvWriters = (): SiteWriters => env.KV_WRITERS as unknown as SiteWriters;

const stub = (origin: string) => env.KV_WRITERS.get(env.KV_WRITERS.idFromName(origin)) as DurableObjectStub<KvSiteWriter>;

/** Projects what the site's object has pending; fails when something is still pending after `waitMs`. */
export async function settled(origin: string, waitMs = 15_000): Promise<WriterStatus> {
  const status = await writerOf(kvWriters(), origin).settle(origin, waitMs);
  if (status.pending > 0) throw new Error(`the KV projection of ${origin} did not settle: ${JSON.stringify(status)}`);
  return status;
}

export const objectStatus = (origin: string): Promise<WriterStatus> => writerOf(kvWriters(), origin).status(origin);

/** Gives the site's writer object `kv` as its URLS binding; returns a function that gives the real one back. */
export async function objectUsesKv(origin: string, kv: KVNamespace): Promise<() => Promise<void>> {
  const real = await runInDurableObject(stub(origin), async (instance: KvSiteWriter) => {
    const own = Reflect.get(instance, "env") as Env;
    Reflect.set(instance, "env", { ...own, URLS: kv });
    return own;
  });
  return async () => {
    await runInDurableObject(stub(origin), async (instance: KvSiteWriter) => {
      Reflect.set(instance, "env", real);
    });
  };
}

/**
 * Runs `work` inside the site's writer object: what the object started (a KV write held by a test
 * wrapper) must be settled from its own context (workerd forbids resolving it from another).
 */
export async function inObject<T>(origin: string, work: () => Promise<T>): Promise<T> {
  return runInDurableObject(stub(origin), () => work());
}

/** Runs `work` on the site's writer object's SQLite (to set up what a reset object leaves behind). */
export async function inSql(origin: string, work: (sql: SqlStorage) => void): Promise<void> {
  await runInDurableObject(stub(origin), async (_instance: KvSiteWriter, state) => {
    work(state.storage.sql);
  });
}
