/**
 * A small incremental 64-bit hash (two independent 32-bit FNV-1a style lanes with avalanche mixing)
 * for content versions. Not cryptographic: it names a version of data we produced ourselves, so
 * it only has to change when the data changes, cheaply, while walking millions of keys.
 */
export class Fingerprint {
  #a = 0x811c9dc5;
  #b = 0x9e3779b9;

  /** Feeds a non-negative integer up to 2^53. */
  addNumber(n: number): this {
    const lo = n >>> 0;
    const hi = Math.floor(n / 0x1_0000_0000) >>> 0;
    this.#mix(lo);
    this.#mix(hi);
    return this;
  }

  addString(s: string): this {
    for (let i = 0; i < s.length; i++) this.#mix(s.charCodeAt(i));
    return this.#mix(s.length);
  }

  #mix(v: number): this {
    this.#a = Math.imul(this.#a ^ v, 0x01000193);
    this.#b = Math.imul(this.#b ^ v, 0x85ebca6b);
    this.#b ^= this.#b >>> 13;
    return this;
  }

  /** The hash so far, to go on with later (`Fingerprint.resume`): a plan kept across steps (src/manifest/build.ts). */
  state(): [number, number] {
    return [this.#a, this.#b];
  }

  /** A fingerprint that goes on from `state()`: the same digest as if it had never stopped. */
  static resume(state: readonly [number, number]): Fingerprint {
    const fp = new Fingerprint();
    fp.#a = state[0] | 0;
    fp.#b = state[1] | 0;
    return fp;
  }

  /** 16 lowercase hex digits. */
  digest(): string {
    let a = this.#a;
    let b = this.#b;
    a ^= a >>> 16;
    a = Math.imul(a, 0x7feb352d);
    a ^= a >>> 15;
    b ^= b >>> 16;
    b = Math.imul(b, 0x846ca68b);
    b ^= b >>> 16;
    return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
  }
}
