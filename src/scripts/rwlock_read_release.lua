-- SPDX-License-Identifier: Apache-2.0
-- Read-write lock: release one read hold (data-layout §1 unlock latch, §4).
-- KEYS[1] lock hash, KEYS[2] channel, KEYS[3] this owner's read-hold timeout prefix,
-- KEYS[4] the key prefix every owner's timeout keys start with (rwlock_key_prefix),
-- KEYS[5] unlock latch for this request.
-- ARGV[1] message (0), ARGV[2] owner field, ARGV[3] publish command (or commands joined by '+': PUBLISH+SPUBLISH), ARGV[4] latch TTL ms,
-- ARGV[5] 1 for a take-back (not_held, release_head.lua).
-- nil: not a holder (when the lock is gone altogether, waiters are told anyway, as Redisson
-- does). 0: still held (by this owner or others). 1: released, waiters told.
-- WRONGTYPE error: not a read-write lock, nothing changed.
local earlier = redis.call('get', KEYS[5])
if earlier then
  return tonumber(earlier)
end
local kind = redis.call('type', KEYS[1])['ok']
if kind == 'none' then
  for command in string.gmatch(ARGV[3], '[^+]+') do
    redis.call(command, KEYS[2], ARGV[1])
  end
  return not_held(KEYS[5], ARGV[4], ARGV[5])
end
if kind ~= 'hash' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a read-write lock')
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode ~= 'read' and mode ~= 'write' then
  return redis.error_reply('WRONGTYPE the key holds a hash that is not a read-write lock')
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return not_held(KEYS[5], ARGV[4], ARGV[5])
end
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if left <= 0 then
  redis.call('hdel', KEYS[1], ARGV[2])
end
-- Holds are numbered 1..count: the one let go is the highest.
redis.call('del', KEYS[3] .. ':' .. (left + 1))

if redis.call('hlen', KEYS[1]) > 1 then
  -- Someone still holds: the hash lives as long as the longest remaining read hold, of any
  -- owner, rebuilt from the fields (write fields have no timeout keys).
  local longest = -2
  local fields = redis.call('hgetall', KEYS[1])
  for i = 1, #fields, 2 do
    local field, count = fields[i], tonumber(fields[i + 1])
    if field ~= 'mode' and count and string.sub(field, -6) ~= ':write' then
      local prefix = KEYS[4] .. ':' .. field .. ':rwlock_timeout:'
      for n = count, 1, -1 do
        local ttl = redis.call('pttl', prefix .. n)
        if ttl > longest then
          longest = ttl
        end
      end
    end
  end
  if mode == 'write' then
    -- The writer (a downgrade) still holds its write: its lease stands, never shortened.
    local ttl = redis.call('pttl', KEYS[1])
    if ttl >= 0 and longest > ttl then
      redis.call('pexpire', KEYS[1], longest)
    end
    redis.call('set', KEYS[5], 0, 'px', ARGV[4])
    return 0
  end
  if longest > 0 then
    redis.call('pexpire', KEYS[1], longest)
    redis.call('set', KEYS[5], 0, 'px', ARGV[4])
    return 0
  end
  -- Read holds remain on paper only: their timeout keys are gone, their leases over.
end
redis.call('del', KEYS[1])
for command in string.gmatch(ARGV[3], '[^+]+') do
  redis.call(command, KEYS[2], ARGV[1])
end
redis.call('set', KEYS[5], 1, 'px', ARGV[4])
return 1
