/**
 * The grouped workers files (test/workers/groups/members.ts) are excluded from the workers project's
 * own files, so a group without its file, or a member that is no file, would drop tests silently:
 * every group has its file, running that group, and every member is a test file.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TEST_GROUPS } from "../workers/groups/members.ts";

describe("grouped workers test files", () => {
  it("each group has its file, and each member is a test file of the workers project", () => {
    expect(Object.keys(TEST_GROUPS).length).toBeGreaterThan(0);
    for (const [group, members] of Object.entries(TEST_GROUPS)) {
      const file = `test/workers/groups/${group}.test.ts`;
      expect(existsSync(file), file).toBe(true);
      expect(readFileSync(file, "utf8")).toContain(`runGroup("${group}");`);
      for (const member of members) expect(existsSync(`test/workers/${member}.test.ts`), member).toBe(true);
    }
  });
});
