/**
 * A count with its noun, singular for exactly one ("1 job", "2 jobs", "1,000 URLs"): every count a
 * person reads (dashboard, status outcomes, the browser view, the CLIs) goes through here.
 */
const numbers = new Intl.NumberFormat("en-US");

/** `n` formatted (thousands separated) with `one` or `many` (default `one` + "s"). */
export const plural = (n: number, one: string, many = `${one}s`): string => `${numbers.format(n)} ${n === 1 ? one : many}`;
