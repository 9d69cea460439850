/**
 * The regeneration's lease fences its publish (src/adapters/d1/regen-store.ts `acquire`,
 * src/adapters/d1/manifest-store.ts `save`). Generated programs of leases taken (under a name, as a
 * job's chain does, or none), leases expiring, and saves of progress and manifests by any holder
 * past or present, against a reference: only the current holder's save lands; any other writes
 * nothing (its manifest save throws LeaseLostError), so the stored manifest is the current holder's
 * last one. A lease taken back under its own name is a new holder: the one it was taken from (a
 * step still running beside its retry) can no longer publish.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { D1ManifestStore } from "../../src/adapters/d1/manifest-store.ts";
import { D1RegenStore } from "../../src/adapters/d1/regen-store.ts";
import { LeaseLostError, type ShardManifest } from "../../src/manifest/manifest.ts";
import { EMPTY_STATE, type Lease } from "../../src/regen/store.ts";
import { freshOrigin } from "./support.ts";

const TTL = 1_000;

type Step = { op: "acquire"; name: "a" | "b" | null } | { op: "expire" } | { op: "save"; holder: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant("acquire" as const), name: fc.constantFrom("a" as const, "b" as const, null) }) },
  { weight: 1, arbitrary: fc.constant({ op: "expire" as const }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("save" as const), holder: fc.nat(7) }) },
);

const manifestOf = (origin: string, n: number): ShardManifest => ({
  origin,
  version: `v${n}`,
  builtAt: n,
  snapshot: null,
  shards: [
    {
      section: "pages",
      n: 1,
      firstKey: 1,
      lastKey: 100 + n,
      urlCount: n,
      byteCount: 10 * n,
      lastChange: n,
      version: `s${n}`,
      extKinds: 0,
      snapshot: null,
    },
  ],
});

describe("the regeneration lease fences the manifest", () => {
  it("generated programs: only the current holder saves progress or publishes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 12 }), async (steps) => {
        const origin = freshOrigin("fence");
        const state = new D1RegenStore(env.DB);
        const manifests = new D1ManifestStore(env.DB);
        const held: Lease[] = [];
        // The reference: who holds the lease (its name and id), until when, and the manifest saved last.
        let holder: { name: string | null; id: string; until: number } | null = null;
        let saved: ShardManifest | null = null;
        let now = 1_000_000;
        for (const [i, step] of steps.entries()) {
          if (step.op === "expire") now += TTL + 1;
          else if (step.op === "acquire") {
            const lease = await state.acquire(origin, now, TTL, step.name ?? undefined);
            const free = holder === null || holder.until < now || (step.name !== null && holder.name === step.name);
            expect(lease !== null).toBe(free);
            if (lease) {
              expect(lease.id).not.toBe(holder?.id);
              holder = { name: step.name, id: lease.id, until: lease.until };
              held.push(lease);
            }
          } else {
            const lease = held[step.holder % Math.max(1, held.length)];
            if (!lease) continue;
            const current = holder?.id === lease.id;
            expect(await state.save(origin, lease, EMPTY_STATE, now)).toBe(current);
            const manifest = manifestOf(origin, i + 1);
            const result = await manifests.save(manifest, { leaseId: lease.id }).then(
              () => "saved",
              (err: unknown) => (err instanceof LeaseLostError ? "lease lost" : String(err)),
            );
            expect(result).toBe(current ? "saved" : "lease lost");
            if (current) saved = manifest;
            expect(await manifests.load(origin)).toEqual(saved);
          }
        }
      }),
      { numRuns: 40 },
    );
  });

  it("a lease stored under its bare name by an earlier version is taken back under that name, and only then", async () => {
    const origin = freshOrigin("fence-bare");
    await env.DB.prepare("INSERT INTO regen_state (origin, state, lease_id, lease_until, updated_at) VALUES (?1, '', 'chain', ?2, 0)")
      .bind(origin, Date.now() + 60_000)
      .run();
    const state = new D1RegenStore(env.DB);
    expect(await state.acquire(origin, Date.now(), TTL, "other")).toBeNull();
    expect(await state.acquire(origin, Date.now(), TTL, "chai")).toBeNull();
    const lease = await state.acquire(origin, Date.now(), TTL, "chain");
    expect(lease?.id.startsWith("chain~")).toBe(true);
  });

  it("a save without a fence (a request's own manifest build) is not fenced", async () => {
    const origin = freshOrigin("fence-none");
    const manifests = new D1ManifestStore(env.DB);
    await manifests.save(manifestOf(origin, 3));
    expect((await manifests.load(origin))?.version).toBe("v3");
  });
});
