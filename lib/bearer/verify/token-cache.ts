import type { VerifiedBearer } from './verified-bearer.js';

interface Entry {
  bearer: VerifiedBearer;
  /** Milliseconds after which the entry is as expired as the token (its `exp` plus the leeway). */
  staleAt: number;
}

/**
 * Verified tokens, least recently used first (a Map keeps insertion order, so a hit is moved to
 * the end). Keyed by the token string itself: equal strings are the same signed token, and a
 * lookup costs a hash of the string instead of a signature check.
 */
export class TokenCache {
  readonly #entries = new Map<string, Entry>();

  constructor(private readonly maxEntries: number) {}

  get(token: string, now: number): VerifiedBearer | undefined {
    const entry = this.#entries.get(token);
    if (!entry) return undefined;
    this.#entries.delete(token);
    if (now >= entry.staleAt) return undefined;
    this.#entries.set(token, entry);
    return entry.bearer;
  }

  set(token: string, bearer: VerifiedBearer, staleAt: number): void {
    this.#entries.delete(token);
    this.#entries.set(token, { bearer, staleAt });
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
