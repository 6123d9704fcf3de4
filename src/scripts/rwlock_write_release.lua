-- SPDX-License-Identifier: Apache-2.0
-- Read-write lock: release one write hold (data-layout §1 unlock latch, §4).
-- KEYS[1] lock hash, KEYS[2] channel, KEYS[3] unlock latch for this request.
-- ARGV[1] message (1), ARGV[2] lease to restore, ARGV[3] owner field .. ':write',
-- ARGV[4] publish command (or commands joined by '+': PUBLISH+SPUBLISH), ARGV[5] latch TTL ms,
-- ARGV[6] 1 for a take-back (not_held, release_head.lua).
-- nil: not the writer (when the lock is gone altogether, waiters are told anyway, as Redisson
-- does). 0: still held (re-entered). 1: the write side is released and waiters are told: the
-- hash is gone, or the owner's own read holds remain (a downgrade: mode becomes read).
-- WRONGTYPE error: not a read-write lock, nothing changed.
local earlier = redis.call('get', KEYS[3])
if earlier then
  return tonumber(earlier)
end
local kind = redis.call('type', KEYS[1])['ok']
if kind == 'none' then
  for command in string.gmatch(ARGV[4], '[^+]+') do
    redis.call(command, KEYS[2], ARGV[1])
  end
  return not_held(KEYS[3], ARGV[5], ARGV[6])
end
if kind ~= 'hash' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a read-write lock')
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode ~= 'read' and mode ~= 'write' then
  return redis.error_reply('WRONGTYPE the key holds a hash that is not a read-write lock')
end
if mode ~= 'write' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return not_held(KEYS[3], ARGV[5], ARGV[6])
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[3], 0, 'px', ARGV[5])
  return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
else
  -- The writer's own read holds remain: it has downgraded. Other readers may come in now, so
  -- they are told too (Redisson stays silent here; its waiters then wait for the TTL).
  redis.call('hset', KEYS[1], 'mode', 'read')
end
for command in string.gmatch(ARGV[4], '[^+]+') do
  redis.call(command, KEYS[2], ARGV[1])
end
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1
