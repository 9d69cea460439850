/** The "misc-1" group of small test files (members.ts): each member's tests inside a describe of its name. */
import { runGroup } from "./run-group.ts";

runGroup("misc-1");
