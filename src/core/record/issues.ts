/**
 * From zod issues to our ValidationIssue: the dotted field path (`images[3].loc`), the rule and
 * the message. Custom checks carry their rule and a message maker in `params` (see `fail`); zod's
 * own issues get their message from the schema's error function (see fields.ts) and their rule
 * from the issue code.
 */
import type { z } from "zod";
import type { ValidationIssue, ValidationRule } from "../errors.ts";
import { echo, echoKey, isAbsent } from "./echo.ts";

type Payload = z.core.ParsePayload<unknown>;
type Path = readonly PropertyKey[];

interface RuleParams {
  rule: ValidationRule;
  /** The message, given the full field name (known only once the issue reached the record). */
  say: (field: string) => string;
}

/** Reports a broken rule from a custom check; later checks of the same value do not run. */
export function fail(payload: Payload, rule: ValidationRule, say: (field: string) => string, path?: PropertyKey[]): void {
  const params: RuleParams = { rule, say };
  payload.issues.push(path ? { code: "custom", input: payload.value, params, path } : { code: "custom", input: payload.value, params });
}

/** `["videos", 0, "restriction", "countries"]` → `videos[0].restriction.countries`. */
export function fieldOf(path: Path): string {
  let field = "";
  for (const key of path) {
    if (typeof key === "number") field += `[${key}]`;
    else field += field === "" ? echoKey(String(key)) : `.${echoKey(String(key))}`;
  }
  return field;
}

/** Where an issue stands in the record, for `toValidationIssues`' order. */
export type IssueRank = (path: Path, unknownKey: boolean) => readonly number[];

/**
 * One zod issue as ValidationIssues (an `unrecognized_keys` issue names several fields). `where`
 * is the record's index and loc, copied into each issue.
 */
function convert(iss: z.core.$ZodIssue, where: { index: number | undefined; loc: string | undefined }, out: Collected): void {
  const field = fieldOf(iss.path);
  const add = (f: string, rule: ValidationRule, message: string): void => {
    out.count++;
    if (out.issues.length >= out.max) return;
    const issue: ValidationIssue = { field: f, rule, message };
    if (where.index !== undefined) issue.index = where.index;
    if (where.loc !== undefined) issue.loc = where.loc;
    out.issues.push(issue);
  };
  switch (iss.code) {
    case "custom": {
      const params = iss.params as RuleParams;
      add(field, params.rule, params.say(field));
      return;
    }
    case "unrecognized_keys":
      // The object's error function gives the allowed keys as its message.
      for (const key of iss.keys) {
        const where = field === "" ? "" : ` in ${field}`;
        add(field === "" ? echoKey(key) : `${field}.${echoKey(key)}`, "unknown-field", `unknown field ${echo(key)}${where} (allowed: ${iss.message})`);
      }
      return;
    case "too_big":
      add(field, "max-count", iss.message);
      return;
    default: {
      // invalid_type / invalid_union / invalid_value: required when absent, except for objects and
      // arrays, which are optional where they may be absent and otherwise must have the type.
      const expected = "expected" in iss ? iss.expected : undefined;
      const structural = expected === "object" || expected === "array";
      const rule: ValidationRule = !structural && isAbsent(iss.input) ? "required" : iss.code === "invalid_value" ? "enum" : "type";
      add(field, rule, iss.message);
    }
  }
}

/** How many ValidationIssues `issues` make, without making them (an unknown-keys issue is one per key). */
export function countValidationIssues(issues: readonly z.core.$ZodRawIssue[]): number {
  let count = 0;
  for (const iss of issues) count += iss.code === "unrecognized_keys" ? (iss as z.core.$ZodIssueUnrecognizedKeys).keys.length : 1;
  return count;
}

interface Collected {
  issues: ValidationIssue[];
  /** Every issue, kept or not. */
  count: number;
  max: number;
}

/**
 * The ValidationIssues of one record, in declaration order: zod reports an object's unknown keys
 * and cross-field checks after its fields, we report them where the field stands (unknown keys
 * first), as clients read them top-down. At most `max` are kept, the rest only counted: one
 * object with 100,000 unknown keys is one zod issue but would be 100,000 of ours.
 */
export function toValidationIssues(
  issues: readonly z.core.$ZodIssue[],
  where: { index: number | undefined; loc: string | undefined },
  rank: IssueRank,
  max: number,
): { issues: ValidationIssue[]; count: number } {
  const ranked: { key: readonly number[]; at: number; iss: z.core.$ZodIssue }[] = [];
  for (let at = 0; at < issues.length; at++) {
    const iss = issues[at]!;
    ranked.push({ key: rank(iss.path, iss.code === "unrecognized_keys"), at, iss });
  }
  ranked.sort((a, b) => compareRanks(a.key, b.key) || a.at - b.at);
  const out: Collected = { issues: [], count: 0, max };
  for (const r of ranked) convert(r.iss, where, out);
  return { issues: out.issues, count: out.count };
}

/** Element by element; a path and its prefix keep zod's order (an object's own check follows its fields). */
function compareRanks(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}
