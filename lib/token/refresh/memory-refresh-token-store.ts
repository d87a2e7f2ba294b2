import type { RefreshTokenRecord, RefreshTokenStore } from './refresh-token-store.js';
import { integerOption } from '../../options/option-checks.js';

/** Options of {@link MemoryRefreshTokenStore}. */
export interface MemoryRefreshTokenStoreOptions {
  /**
   * Most records kept; when full, expired records are swept (at most once per `maxRecords / 2`
   * saves, so a save costs O(1) amortized) and then the oldest is dropped. Defaults to 100000.
   */
  maxRecords?: number;
}

/**
 * The default refresh-token store: a Map in this process. Tokens die with the process and are
 * not shared between instances; use the Redis store for either.
 *
 * @example
 * tokenRouter({ ..., refreshTokens: { store: new MemoryRefreshTokenStore() } })
 */
export class MemoryRefreshTokenStore implements RefreshTokenStore {
  readonly #records = new Map<string, RefreshTokenRecord>();
  readonly #bySubject = new Map<string, Set<string>>();
  readonly #max: number;
  #savesSinceSweep = 0;

  constructor(options: MemoryRefreshTokenStoreOptions = {}) {
    const max = integerOption(options.maxRecords ?? 100_000, 'maxRecords', 1);
    this.#max = max;
  }

  /** Number of records held (live or not yet swept). */
  get size(): number {
    return this.#records.size;
  }

  async save(record: RefreshTokenRecord, maxPerSubject?: number): Promise<void> {
    this.#savesSinceSweep += 1;
    if (this.#records.size >= this.#max) this.#makeRoom(Date.now());
    this.#records.set(record.id, { ...record });
    let ids = this.#bySubject.get(record.subject);
    if (!ids) this.#bySubject.set(record.subject, (ids = new Set()));
    ids.add(record.id);
    // A Set keeps insertion order too: the subject's oldest tokens go first, one step each.
    while (maxPerSubject !== undefined && ids.size > maxPerSubject) {
      const oldest = this.#records.get(ids.values().next().value as string);
      if (oldest) this.#delete(oldest);
      else ids.delete(ids.values().next().value as string);
    }
  }

  async use(id: string, now: number, idleTtlMs: number): Promise<RefreshTokenRecord | null> {
    const record = this.#records.get(id);
    if (!record) return null;
    if (now >= record.expiresAt || now >= record.idleExpiresAt) {
      this.#delete(record);
      return null;
    }
    record.idleExpiresAt = Math.min(now + idleTtlMs, record.expiresAt);
    return { ...record };
  }

  async revoke(id: string): Promise<boolean> {
    const record = this.#records.get(id);
    if (!record) return false;
    this.#delete(record);
    return true;
  }

  async revokeSubject(subject: string): Promise<number> {
    const ids = this.#bySubject.get(subject);
    if (!ids) return 0;
    const count = ids.size;
    for (const id of ids) this.#records.delete(id);
    this.#bySubject.delete(subject);
    return count;
  }

  #delete(record: RefreshTokenRecord): void {
    this.#records.delete(record.id);
    const ids = this.#bySubject.get(record.subject);
    ids?.delete(record.id);
    if (ids?.size === 0) this.#bySubject.delete(record.subject);
  }

  #makeRoom(now: number): void {
    // A full sweep costs O(maxRecords): run it only after maxRecords / 2 saves, so its cost
    // spreads over them instead of landing on every save of a store full of live tokens.
    if (this.#savesSinceSweep >= this.#max / 2) {
      this.#savesSinceSweep = 0;
      for (const record of this.#records.values()) {
        if (now >= record.expiresAt || now >= record.idleExpiresAt) this.#delete(record);
      }
    }
    if (this.#records.size >= this.#max) {
      // Map keeps insertion order: the first entry is the oldest token.
      this.#delete(this.#records.values().next().value as RefreshTokenRecord);
    }
  }
}
