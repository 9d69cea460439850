/**
 * The one SQL test of whether a database serves a row of `urls` (migration 0024): a row a move
 * gave away stays in its old home, hidden from that move's flip until the purge. `count` is the
 * SQL (a bound parameter) of the partition count the rows are served under: the site's layout's
 * `settled` (0 or a database that is no partition: every row).
 */
export const servedRow = (alias: string, count: string): string => `(${alias}.moved_in IS NULL OR ${alias}.moved_in > ${count})`;
