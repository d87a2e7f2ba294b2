/**
 * Lua scripts of the Redis refresh-token store. Each runs atomically in Redis, so two token
 * servers sharing one Redis cannot interleave (a token saved while its subject is being revoked
 * is either revoked with the others or saved after, never half-recorded).
 *
 * Layout, under a bucket's key prefix B (see redis-key-layout.ts; B carries the bucket's hash
 * tag, so all keys a script touches share one Redis Cluster slot):
 * - `B token:<id>`: a hash (subject, service, clientId, labels, createdAt, expiresAt,
 *   idleExpiresAt) whose PX TTL is `min(idleExpiresAt, expiresAt) - now`, so a dead token
 *   simply disappears and nothing needs sweeping.
 * - `B subject:<subject>`: the set of that subject's token ids in this bucket, for
 *   revokeSubject, kept alive until the longest-lived of its tokens expires.
 *
 * And, outside the buckets, under the subject's own hash tag S (redis-key-layout.ts):
 * - `S tokens`: a sorted set of all the subject's token ids scored by issue time, for the cap
 *   on live tokens per subject (CAP_SCRIPT), O(log n) per save.
 *
 * Token keys are derived inside the scripts from a prefix argument (the same bucket's), which
 * Redis Cluster allows because they hash to the declared key's slot. The same scripts serve
 * the legacy single-slot layout of dockgate 0.1 (no tag) on one Redis.
 */

/** Ids of a subject's set looked at on each save to drop those whose token has expired. */
export const PRUNE_SAMPLE = 3;

/**
 * KEYS: token key, subject key. ARGV: id, subject, service, clientId, labels (JSON or ""),
 * createdAt, expiresAt, idleExpiresAt, now, token-key prefix. Returns 1, or 0 when already dead.
 */
export const SAVE_SCRIPT = `
local now = tonumber(ARGV[9])
local expiresAt = tonumber(ARGV[7])
local ttl = math.min(tonumber(ARGV[8]), expiresAt) - now
if ttl <= 0 then return 0 end
redis.call('HSET', KEYS[1], 'subject', ARGV[2], 'service', ARGV[3], 'clientId', ARGV[4],
  'labels', ARGV[5], 'createdAt', ARGV[6], 'expiresAt', ARGV[7], 'idleExpiresAt', ARGV[8])
redis.call('PEXPIRE', KEYS[1], ttl)
local sample = redis.call('SRANDMEMBER', KEYS[2], ${PRUNE_SAMPLE})
for _, other in ipairs(sample) do
  if redis.call('EXISTS', ARGV[10] .. other) == 0 then redis.call('SREM', KEYS[2], other) end
end
redis.call('SADD', KEYS[2], ARGV[1])
local keep = expiresAt - now
if redis.call('PTTL', KEYS[2]) < keep then redis.call('PEXPIRE', KEYS[2], keep) end
return 1
`;

/**
 * KEYS: token key. ARGV: now, idleTtlMs. Returns the record's hash as a flat list with
 * idleExpiresAt moved to min(now + idleTtlMs, expiresAt) and the TTL moved with it, or false
 * when the token is unknown or dead. The clock check repeats the TTL's verdict for callers whose
 * clock is ahead of Redis's.
 */
export const USE_SCRIPT = `
local fields = redis.call('HMGET', KEYS[1], 'expiresAt', 'idleExpiresAt')
if not fields[1] then return false end
local now = tonumber(ARGV[1])
local expiresAt = tonumber(fields[1])
if now >= expiresAt or now >= tonumber(fields[2]) then
  redis.call('DEL', KEYS[1])
  return false
end
local idle = math.min(now + tonumber(ARGV[2]), expiresAt)
redis.call('HSET', KEYS[1], 'idleExpiresAt', string.format('%.0f', idle))
redis.call('PEXPIRE', KEYS[1], idle - now)
return redis.call('HGETALL', KEYS[1])
`;

/** KEYS: token key. ARGV: subject-key prefix, id. Returns the token's subject when it existed, else false. */
export const REVOKE_SCRIPT = `
local subject = redis.call('HGET', KEYS[1], 'subject')
if not subject then return false end
redis.call('DEL', KEYS[1])
redis.call('SREM', ARGV[1] .. subject, ARGV[2])
return subject
`;

/**
 * The per-subject cap. KEYS: the subject's sorted set. ARGV: id, createdAt, cutoff (tokens
 * issued before it are past their absolute expiry), maxPerSubject, keepMs (the new token's
 * absolute lifetime). Adds the id, drops entries past the cutoff, and pops (ZPOPMIN) the oldest
 * beyond the cap; returns their ids, which the caller revokes. A new id is scored above every
 * other even within one millisecond, so it is never the one popped. O(log n) per call.
 */
export const CAP_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
local score = tonumber(ARGV[2])
local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if top[2] and tonumber(top[2]) >= score then score = tonumber(top[2]) + 1 end
redis.call('ZADD', KEYS[1], string.format('%.0f', score), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[5]) then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if over <= 0 then return {} end
local popped = redis.call('ZPOPMIN', KEYS[1], over)
local ids = {}
for i = 1, #popped, 2 do ids[#ids + 1] = popped[i] end
return ids
`;

/** KEYS: the subject's sorted set. ARGV: id. Removes one id (a revoked token). */
export const UNCOUNT_SCRIPT = `
return redis.call('ZREM', KEYS[1], ARGV[1])
`;

/** KEYS: subject key. ARGV: token-key prefix. Returns how many live tokens were revoked. */
export const REVOKE_SUBJECT_SCRIPT = `
local revoked = 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  revoked = revoked + redis.call('DEL', ARGV[1] .. id)
end
redis.call('DEL', KEYS[1])
return revoked
`;
