/** The limits sweep's watch over every meter an entry makes (src/jobs/meter.ts), shared by its test files. */
import { vi } from "vitest";
import { Meter } from "../../../src/jobs/meter.ts";

/**
 * Every meter the entry makes from now on, and every call it refused. `charge` multiplies what each
 * call costs (a path costlier than the one at hand, for the stop at a budget).
 */
export function watchMeters(charge = 1): { meters: Meter[]; refused: string[]; largest: () => number } {
  const meters: Meter[] = [];
  const refused: string[] = [];
  const count = Meter.prototype.count;
  vi.spyOn(Meter.prototype, "count").mockImplementation(function (this: Meter, what, n = 1) {
    if (!meters.includes(this)) meters.push(this);
    try {
      count.call(this, what, n * charge);
    } catch (err) {
      refused.push(String(err));
      throw err;
    }
  });
  return { meters, refused, largest: () => Math.max(0, ...meters.map((m) => m.serviceCalls)) };
}

export const quiet = () => {
  vi.spyOn(console, "log").mockImplementation(() => undefined);
  vi.spyOn(console, "info").mockImplementation(() => undefined);
};
export const report = (line: string) => console.warn(`limits sweep: ${line}`);
