/**
 * A SHA-256 digest of a sequence of strings, fed one at a time, whose value can be read after any
 * of them. WebCrypto digests only whole buffers, so the strings are gathered into blocks of about
 * 64 Ki characters and chained (chain = SHA-256(chain ‖ block)); where blocks end depends only on
 * the strings, so the same sequence always gives the same value. Each string is length-prefixed:
 * ["ab", "c"] and ["a", "bc"] differ.
 */

const BLOCK_CHARS = 1 << 16;
const encoder = new TextEncoder();

export class SequenceDigest {
  #chain: Uint8Array<ArrayBuffer> = new Uint8Array(32);
  #pending: string[] = [];
  #pendingChars = 0;

  async add(value: string): Promise<void> {
    this.#pending.push(`${value.length}:`, value);
    this.#pendingChars += value.length;
    if (this.#pendingChars >= BLOCK_CHARS) {
      this.#chain = await this.#fold();
      this.#pending = [];
      this.#pendingChars = 0;
    }
  }

  /** The digest of everything added so far (hex); adding may go on after. */
  async value(): Promise<string> {
    return [...(await this.#fold())].map((b) => b.toString(16).padStart(2, "0")).join("");
  }

  async #fold(): Promise<Uint8Array<ArrayBuffer>> {
    const block = encoder.encode(this.#pending.join(""));
    const input = new Uint8Array(this.#chain.length + block.length);
    input.set(this.#chain);
    input.set(block, this.#chain.length);
    return new Uint8Array(await crypto.subtle.digest("SHA-256", input));
  }
}
