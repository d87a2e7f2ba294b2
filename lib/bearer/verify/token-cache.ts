import type { VerifiedBearer } from './verified-bearer.js';

interface Entry {
  bearer: VerifiedBearer;
  /** Milliseconds after which the entry is as expired as the token (its `exp` plus the leeway). */
  staleAt: number;
  /** The insertion count when the entry was last moved to the young end. */
  touched: number;
}

/**
 * Verified tokens, least recently used first (a Map keeps insertion order, so a hit is moved to
 * the end). Keyed by the token string itself: equal strings are the same signed token, and a
 * lookup costs a hash of the string instead of a signature check.
 *
 * A hit is moved only once half the cache has been inserted since its last move: an entry
 * that young cannot be the next evicted anyway, and the hot token of a pull (dozens of requests)
 * is then looked up with one `get` instead of a delete and an insert per request.
 */
export class TokenCache {
  readonly #entries = new Map<string, Entry>();
  readonly #halfLife: number;
  #inserted = 0;

  constructor(private readonly maxEntries: number) {
    this.#halfLife = Math.max(1, Math.floor(maxEntries / 2));
  }

  get(token: string, now: number): VerifiedBearer | undefined {
    const entry = this.#entries.get(token);
    if (!entry) return undefined;
    if (now >= entry.staleAt) {
      this.#entries.delete(token);
      return undefined;
    }
    if (this.#inserted - entry.touched >= this.#halfLife) {
      this.#entries.delete(token);
      entry.touched = ++this.#inserted;
      this.#entries.set(token, entry);
    }
    return entry.bearer;
  }

  set(token: string, bearer: VerifiedBearer, staleAt: number): void {
    this.#entries.delete(token);
    this.#entries.set(token, { bearer, staleAt, touched: ++this.#inserted });
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
