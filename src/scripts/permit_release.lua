-- SPDX-License-Identifier: Apache-2.0
-- Give a permit of a permit-expirable semaphore back (data-layout §1 unlock latch, §7).
-- KEYS[1] the count, KEYS[2] the permits' expiries, KEYS[3] channel, KEYS[4] this release's latch.
-- ARGV[1] the permit id (16 bytes), ARGV[2] publish command(s), ARGV[3] latch TTL ms,
-- ARGV[4] now (Unix ms).
-- nil: no such permit (never taken, released, or expired). 1: released, waiters told.
local earlier = redis.call('get', KEYS[4])
if earlier then
  return tonumber(earlier)
end
read_count(KEYS[1])
reclaim(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[4])
if redis.call('zrem', KEYS[2], ARGV[1]) == 0 then
  return nil
end
publish_count(KEYS[3], ARGV[2], redis.call('incrby', KEYS[1], 1))
redis.call('set', KEYS[4], 1, 'px', ARGV[3])
return 1
