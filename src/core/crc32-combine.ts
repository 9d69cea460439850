/**
 * The CRC-32 of two byte strings joined, from their own CRC-32s (as zlib's crc32_combine, 1.2.12
 * and later): what a gzip trailer of blocks deflated apart needs (core/gzip-blocks.ts), without
 * reading the document again. Polynomials over GF(2), reflected.
 */

const POLY = 0xedb88320;

/** a(x)·b(x) modulo the CRC polynomial. */
function multModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  let bb = b >>> 0;
  for (;;) {
    if ((a & m) !== 0) {
      p ^= bb;
      if ((a & (m - 1)) === 0) break;
    }
    m = m / 2;
    bb = bb & 1 ? (bb >>> 1) ^ POLY : bb >>> 1;
  }
  return p >>> 0;
}

/** x^(2^k) modulo the polynomial, k = 0…31. */
const X2N: readonly number[] = (() => {
  const table = [0x40000000];
  for (let k = 1; k < 32; k++) table.push(multModP(table[k - 1]!, table[k - 1]!));
  return table;
})();

/** x^(n·2^k) modulo the polynomial. */
function x2nModP(n: number, k: number): number {
  let p = 0x80000000;
  let left = n;
  let bit = k;
  while (left > 0) {
    if (left % 2 === 1) p = multModP(X2N[bit & 31]!, p);
    left = Math.floor(left / 2);
    bit++;
  }
  return p;
}

/** The CRC-32 of A followed by B, from crc(A), crc(B) and B's length in bytes. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(x2nModP(lengthB, 3), crcA >>> 0) ^ crcB) >>> 0;
}
