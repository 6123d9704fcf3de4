-- Give permits back to a semaphore (data-layout §1 unlock latch, §7).
-- KEYS[1] the count, KEYS[2] channel, KEYS[3] this release's latch.
-- ARGV[1] permits, ARGV[2] publish command(s), ARGV[3] latch TTL ms.
-- 1: released, waiters told the new count.
local earlier = redis.call('get', KEYS[3])
if earlier then
  return tonumber(earlier)
end
read_count(KEYS[1])
publish_count(KEYS[2], ARGV[2], redis.call('incrby', KEYS[1], ARGV[1]))
redis.call('set', KEYS[3], 1, 'px', ARGV[3])
return 1
