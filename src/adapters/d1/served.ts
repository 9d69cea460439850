/**
 * The one SQL test of whether a database serves a row of `urls` (migration 0025): a row a move
 * gave away stays in its old home, hidden from that move's flip until the purge. `count` is the
 * SQL (a bound parameter) of the partition count the rows are served under: the site's layout's
 * `settled` (0 for a database that is no partition: every row).
 */
export const servedRow = (alias: string, count: string): string => `(${alias}.moved_in IS NULL OR ${alias}.moved_in > ${count})`;

/**
 * The partition count a database's rows are served under, read for each query (a partition: its
 * site's layout, src/partitions/served.ts); null: it serves nothing yet (a database a move is
 * filling, served from the flip on).
 */
export type ServedUnder = () => Promise<number | null>;

/** A database that is no partition: every row served. */
export const EVERY_ROW: ServedUnder = async () => 0;
