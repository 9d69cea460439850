import { describe, expect, it } from "vitest";
import { validateRecord } from "./validate.ts";

const SITE = "https://example.com";
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const ctx = { sites: new Set([SITE]), defaultSection: "pages", now: NOW };

describe("lastmod sanity (future-date)", () => {
  it("accepts up to 24 hours ahead of the clock and rejects beyond, naming field and rule", () => {
    expect(validateRecord({ loc: `${SITE}/a`, lastmod: "2026-11-24T11:59:00Z" }, ctx).ok).toBe(true);
    expect(validateRecord({ loc: `${SITE}/a`, lastmod: "2026-11-24" }, ctx).ok).toBe(true);
    const late = validateRecord({ loc: `${SITE}/a`, lastmod: "2026-11-24T12:00:01Z" }, ctx, 3);
    expect(late).toEqual({
      ok: false,
      issues: [{ index: 3, loc: `${SITE}/a`, field: "lastmod", rule: "future-date", message: expect.stringContaining("2026-11-23T12:00:00.000Z") }],
    });
  });

  it("counts a partial date from its first instant, and a time zone offset as written", () => {
    expect(validateRecord({ loc: `${SITE}/a`, lastmod: "2026" }, ctx).ok).toBe(true);
    expect(validateRecord({ loc: `${SITE}/a`, lastmod: "2031" }, ctx)).toMatchObject({ ok: false, issues: [{ rule: "future-date" }] });
    // 2026-11-24T13:30+02:00 is 11:30Z: within the day.
    expect(validateRecord({ loc: `${SITE}/a`, lastmod: "2026-11-24T13:30:00+02:00" }, ctx).ok).toBe(true);
  });
});
