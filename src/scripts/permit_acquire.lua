-- SPDX-License-Identifier: Apache-2.0
-- Take one permit of a permit-expirable semaphore (data-layout §7), one try of a waiting acquire.
-- KEYS[1] the count, KEYS[2] the permits' expiries (zset id -> Unix ms), KEYS[3] channel.
-- ARGV[1] the permit's expiry (Unix ms), ARGV[2] its id (16 bytes), ARGV[3] now (Unix ms),
-- ARGV[4] publish command(s), ARGV[5] '1' to wait on a semaphore that holds nothing.
-- nil: taken (or already this id's: a try sent again takes nothing twice). An integer: refused,
-- ms until the earliest permit expires (-1: none expires). NOT_INITIALIZED: the name holds nothing.
read_count(KEYS[1])
reclaim(KEYS[1], KEYS[2], KEYS[3], ARGV[4], ARGV[3])
if redis.call('zscore', KEYS[2], ARGV[2]) then
  return nil
end
local available = read_count(KEYS[1])
if available == nil and ARGV[5] ~= '1' then
  return not_initialized(KEYS[1])
end
if available ~= nil and available >= 1 then
  redis.call('decrby', KEYS[1], 1)
  redis.call('zadd', KEYS[2], ARGV[1], ARGV[2])
  local ttl = redis.call('pttl', KEYS[1])
  if ttl > 0 then
    redis.call('pexpire', KEYS[2], ttl)
  end
  return nil
end
-- 922337203685477: Redisson's "never expires".
local first = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
if first[1] and tonumber(first[2]) < 922337203685477 then
  return math.max(0, tonumber(first[2]) - tonumber(ARGV[3]))
end
return -1
