import keySlot from 'cluster-key-slot';

/**
 * Where the Redis refresh-token store puts its keys, so that it runs on Redis Cluster.
 *
 * Each Lua script touches a token's hash and its subject's set of ids, so both must hash to one
 * slot; putting every key in one slot would make one shard hold the whole service. Tokens are
 * therefore split into {@link BUCKETS} buckets by their id (the SHA-256 of the token, so the
 * split is uniform and needs nothing in the token itself), and every key carries its bucket's
 * hash tag:
 *
 * - `P{tag}:token:<id>`: the token's hash;
 * - `P{tag}:subject:<subject>`: ids of that subject's tokens in this bucket.
 *
 * - `P{s:<subject>}:tokens`: all of a subject's token ids by issue time, for the per-subject cap
 *   (its own slot: a subject's tokens span every bucket).
 *
 * save, use and revoke are one script in one bucket (save and revoke then one more on the
 * subject's sorted set); revokeSubject runs one script per bucket,
 * each atomic on its own, reaching the subject's tokens wherever the cluster keeps them.
 *
 * The tags are chosen so the buckets' slots are spread evenly over 0–16383: a cluster whose
 * masters own equal contiguous slot ranges (what `redis-cli --cluster create` makes) gets an
 * equal share of buckets on each master, up to 64 masters.
 *
 * Dockgate 0.1 kept keys as `P token:<id>` and `P subject:<subject>` (one Redis only); those
 * are the "legacy" keys, still read until they expire.
 */
export const BUCKETS = 64;

const SLOTS = 16384;

/** The hash tag of each bucket: the first short string whose slot falls in that bucket's share of the slot range. */
const TAGS: readonly string[] = (() => {
  const tags: (string | undefined)[] = new Array(BUCKETS).fill(undefined);
  let left = BUCKETS;
  for (let candidate = 0; left > 0; candidate += 1) {
    const tag = candidate.toString(36);
    const bucket = Math.floor((keySlot(tag) * BUCKETS) / SLOTS);
    if (tags[bucket] === undefined) {
      tags[bucket] = tag;
      left -= 1;
    }
  }
  return tags as string[];
})();

/** The bucket of a token id: its first byte (ids are hex SHA-256), else a hash of the id. */
export function bucketOf(id: string): number {
  const byte = parseInt(id.slice(0, 2), 16);
  return (Number.isNaN(byte) || id.length < 2 ? keySlot(id) : byte) % BUCKETS;
}

/** Key names of one store (one key prefix). */
export class RedisKeyLayout {
  readonly #bucketPrefixes: readonly string[];
  readonly legacyTokenPrefix: string;
  readonly legacySubjectPrefix: string;

  readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
    this.#bucketPrefixes = TAGS.map((tag) => `${prefix}{${tag}}:`);
    this.legacyTokenPrefix = `${prefix}token:`;
    this.legacySubjectPrefix = `${prefix}subject:`;
  }

  /** Prefix of token keys in a bucket (the scripts append ids to it). */
  tokenPrefix(bucket: number): string {
    return `${this.#bucketPrefixes[bucket] as string}token:`;
  }

  /** Prefix of subject keys in a bucket (the scripts append subjects to it). */
  subjectPrefix(bucket: number): string {
    return `${this.#bucketPrefixes[bucket] as string}subject:`;
  }

  tokenKey(id: string): string {
    return this.tokenPrefix(bucketOf(id)) + id;
  }

  subjectKey(bucket: number, subject: string): string {
    return this.subjectPrefix(bucket) + subject;
  }

  /** The subject's sorted set of token ids (the cap's count), under the subject's own hash tag. */
  subjectTokensKey(subject: string): string {
    // A "}" in a subject ends the tag early: the key is still this subject's alone, in one slot.
    return `${this.prefix}{s:${subject}}:tokens`;
  }
}
