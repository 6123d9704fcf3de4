-- SPDX-License-Identifier: Apache-2.0
-- Give permits back to a semaphore (data-layout §1 unlock latch, §7).
-- KEYS[1] the count, KEYS[2] channel, KEYS[3] this release's latch.
-- ARGV[1] permits, ARGV[2] publish command(s), ARGV[3] latch TTL ms.
-- 1: released, waiters told the new count. An error, changing nothing, when the count would pass
-- 2147483647.
local earlier = redis.call('get', KEYS[3])
if earlier then
  return tonumber(earlier)
end
local total = (read_count(KEYS[1]) or 0) + tonumber(ARGV[1])
-- Redisson reads the count as a Java int: past its range, a Java client of the same data fails.
if total > 2147483647 then
  return redis.error_reply('ERR releasing ' .. ARGV[1] .. ' permits would make ' ..
                           string.format('%.0f', total) .. ' available, past 2147483647 (the ' ..
                           'most a Java int, and so Redisson, holds); nothing was changed')
end
publish_count(KEYS[2], ARGV[2], redis.call('incrby', KEYS[1], ARGV[1]))
redis.call('set', KEYS[3], 1, 'px', ARGV[3])
return 1
