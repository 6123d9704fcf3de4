-- SPDX-License-Identifier: Apache-2.0
-- Read-write lock: take a read hold (data-layout §4).
-- KEYS[1] lock hash, KEYS[2] this owner's read-hold timeout prefix (rwlock_timeout_prefix).
-- KEYS[3] (optional) this try's latch: see below.
-- ARGV[1] lease ms, ARGV[2] owner field, ARGV[3] owner field .. ':write'.
-- nil: acquired. Else the holder's PTTL. WRONGTYPE error: not a read-write lock, nothing changed.
-- Each read hold n of the owner gets its own string KEYS[2]:n = 1 with PX = its lease, and the
-- hash lives as long as the longest of them (or the write hold, when longer).
-- A try whose take-back has run (its latch exists) arrived late: it changes nothing.
if KEYS[3] and redis.call('exists', KEYS[3]) == 1 then
  return 0
end
local lease = tonumber(ARGV[1])
local kind = redis.call('type', KEYS[1])['ok']
if kind == 'none' then
  redis.call('hset', KEYS[1], 'mode', 'read', ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':1', 1, 'px', lease)
  redis.call('pexpire', KEYS[1], lease)
  return nil
end
if kind ~= 'hash' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a read-write lock')
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode ~= 'read' and mode ~= 'write' then
  -- A plain lock's hash (no mode) or something else: Redisson would add itself to it.
  return redis.error_reply('WRONGTYPE the key holds a hash that is not a read-write lock')
end
-- Readers share; in write mode only the writer itself may read (a downgrade).
if mode == 'read' or redis.call('hexists', KEYS[1], ARGV[3]) == 1 then
  local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':' .. n, 1, 'px', lease)
  local left = redis.call('pttl', KEYS[1])
  if left < lease then
    redis.call('pexpire', KEYS[1], lease)
  end
  return nil
end
return redis.call('pttl', KEYS[1])
