/**
 * A host names one registered site (issue 50; docs/tenants.md "The platform API"): registrations of
 * one host spelled any way — either scheme, any port, a trailing dot, any case — sent at once leave
 * exactly one site, the one registration that answered 201; every other answers 409 and writes
 * nothing. The insert checks the host in the same statement (src/adapters/d1/site-registry.ts
 * create), so this holds whatever order D1 runs them in.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { siteEnv } from "./notify-support.ts";
import { bearer } from "./support/admin.ts";
import { call, freshOrigin } from "./support.ts";

/** How one host is spelled in a registration: scheme, port, trailing dot, case. */
const spellingArb = fc.record({
  scheme: fc.constantFrom("https", "http"),
  port: fc.constantFrom("", ":8443", ":8787"),
  dot: fc.boolean(),
  upper: fc.boolean(),
});

describe("registrations of one host sent at once", () => {
  const platformOrigin = freshOrigin("platform");
  const e = siteEnv(platformOrigin);

  it("leave one site, the one that answered 201", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(spellingArb, { minLength: 2, maxLength: 6, selector: (s) => JSON.stringify(s) }), async (spellings) => {
        // A *.test host: http is taken for it (local use), so every scheme is a valid registration.
        const host = `one-${Math.random().toString(36).slice(2, 10)}.test`;
        const origins = spellings.map((s) => `${s.scheme}://${s.upper ? host.toUpperCase() : host}${s.dot ? "." : ""}${s.port}`);
        const answers = await Promise.all(
          origins.map((origin) =>
            call(e, `${platformOrigin}/sitemap-admin/sites`, {
              method: "POST",
              headers: { ...bearer, "Content-Type": "application/json" },
              body: JSON.stringify({ origin }),
            }),
          ),
        );
        const statuses = answers.map((r) => r.status);
        expect(
          statuses.filter((s) => s === 201),
          JSON.stringify(statuses),
        ).toHaveLength(1);
        expect(
          statuses.filter((s) => s !== 201).every((s) => s === 409),
          JSON.stringify(statuses),
        ).toBe(true);
        const winner = (await answers[statuses.indexOf(201)]!.json()) as { site: { origin: string } };
        const { results } = await e.DB.prepare("SELECT origin FROM registry_sites WHERE instr(origin, ?1) > 0").bind(host).all<{ origin: string }>();
        expect(results.map((r) => r.origin)).toEqual([winner.site.origin]);
        // Stored as compared: lowercase, without the trailing dot.
        expect(winner.site.origin).toMatch(new RegExp(`^https?://${host.replace(/\./g, "\\.")}(:\\d+)?$`));
      }),
      { numRuns: 15 },
    );
  });
});
