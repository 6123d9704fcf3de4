-- SPDX-License-Identifier: Apache-2.0
-- Read-write lock: take a write hold (data-layout §4).
-- KEYS[1] lock hash. ARGV[1] lease ms, ARGV[2] owner field .. ':write', ARGV[3] owner field.
-- KEYS[2] (optional) this try's latch: see below.
-- nil: acquired, or re-entered (the TTL grows by the lease: PTTL + lease, as Redisson does).
-- Else the holder's PTTL. Errors, nothing changed: WRONGTYPE (not a read-write lock);
-- RWLOCK_UPGRADE when the owner holds a read hold and no write hold: the write would wait for
-- its own read for ever (Redisson waits there, redisson/redisson#4796).
-- A try whose take-back has run (its latch exists) arrived late: it changes nothing.
if KEYS[2] and redis.call('exists', KEYS[2]) == 1 then
  return 0
end
local lease = tonumber(ARGV[1])
local kind = redis.call('type', KEYS[1])['ok']
if kind == 'none' then
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
  redis.call('pexpire', KEYS[1], lease)
  return nil
end
if kind ~= 'hash' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a read-write lock')
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode ~= 'read' and mode ~= 'write' then
  return redis.error_reply('WRONGTYPE the key holds a hash that is not a read-write lock')
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  local left = redis.call('pttl', KEYS[1])
  if left < 0 then
    left = 0
  end
  redis.call('pexpire', KEYS[1], left + lease)
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 1 then
  -- A message after the code: Redis 7 prefixes a lone word with ERR.
  return redis.error_reply('RWLOCK_UPGRADE the owner holds a read lock: a write lock would wait for it for ever')
end
return redis.call('pttl', KEYS[1])
