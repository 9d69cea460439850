/** The columns a CSV import maps: the record's scalar fields, in declaration order. */
import { SCALAR_FIELDS } from "./scalars.ts";

export const RECORD_CSV_COLUMNS = Object.keys(SCALAR_FIELDS) as readonly (keyof typeof SCALAR_FIELDS)[];
