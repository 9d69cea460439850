/**
 * Declaration order of issues: where a path stands in the record, read off the schema itself
 * (object fields in shape order, array items by index), so that issues read top-down.
 */
import type { z } from "zod";
import type { IssueRank } from "./issues.ts";

interface Def {
  type: string;
  in?: z.core.$ZodType;
  out?: z.core.$ZodType;
  innerType?: z.core.$ZodType;
  shape?: Record<string, z.core.$ZodType>;
  element?: z.core.$ZodType;
}

/** The schema behind wrappers: optional fields, preprocessing pipes. */
function unwrap(schema: z.core.$ZodType): Def {
  let def = schema._zod.def as Def;
  for (;;) {
    if (def.type === "optional" && def.innerType) def = def.innerType._zod.def as Def;
    else if (def.type === "pipe" && def.in && def.out) def = (def.in._zod.def.type === "transform" ? def.out : def.in)._zod.def as Def;
    else return def;
  }
}

/**
 * Ranks paths of `root`. An unknown key ranks before its object's fields (they are reported
 * first), except at the top, where it ranks `topUnknown` (between the record's own fields and its
 * extensions).
 */
export function declarationRank(root: z.core.$ZodType, topUnknown: number): IssueRank {
  return (path, unknownKey) => {
    const ranks: number[] = [];
    let def: Def | null = unwrap(root);
    for (const key of path) {
      if (def === null) break;
      if (typeof key === "number" && def.type === "array" && def.element) {
        ranks.push(key);
        def = unwrap(def.element);
      } else if (def.type === "object" && def.shape && typeof key === "string" && key in def.shape) {
        ranks.push(Object.keys(def.shape).indexOf(key));
        def = unwrap(def.shape[key]!);
      } else def = null;
    }
    if (unknownKey) ranks.push(path.length === 0 ? topUnknown : -1);
    return ranks;
  };
}
