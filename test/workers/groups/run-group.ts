/** Registers a group's members (members.ts), each inside a describe of its own name, so its top-level hooks are scoped to it. */
import { describe } from "vitest";
import { TEST_GROUPS } from "./members.ts";

export function runGroup(name: string): void {
  const members = TEST_GROUPS[name];
  if (!members) throw new Error(`no test group ${name}`);
  for (const member of members)
    describe(member, async () => {
      await import(`../${member}.test.ts`);
    });
}
