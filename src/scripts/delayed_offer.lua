-- SPDX-License-Identifier: Apache-2.0
-- Offers an element to a delayed queue (data-layout §9), packed as the Redisson version that
-- shares the queue packs it, so that its transfer task can read it.
-- KEYS[1] destination list, KEYS[2] due-time sorted set, KEYS[3] arrival list, KEYS[4] channel.
-- ARGV[1] due time (Unix ms), ARGV[2] random id, ARGV[3] value, ARGV[4] layout: '4' (Redisson
-- 4.x: the id's bytes after their length) or '3' (3.x: the id as a number).
-- Refuses, writing nothing, keys of another type. Tells the channel the due time when the
-- element is now the earliest one.
for i, want in ipairs({'list', 'zset', 'list'}) do
  local kind = redis.call('type', KEYS[i]).ok
  if kind ~= 'none' and kind ~= want then
    return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' holds a ' .. kind .. ', not a ' .. want)
  end
end
local element
if ARGV[4] == '3' then
  element = struct.pack('dLc0', tonumber(ARGV[2]), string.len(ARGV[3]), ARGV[3])
else
  element = struct.pack('Bc0Lc0', string.len(ARGV[2]), ARGV[2], string.len(ARGV[3]), ARGV[3])
end
redis.call('zadd', KEYS[2], ARGV[1], element)
redis.call('rpush', KEYS[3], element)
local earliest = redis.call('zrange', KEYS[2], 0, 0)
if earliest[1] == element then
  redis.call('publish', KEYS[4], ARGV[1])
end
return 1
