-- SPDX-License-Identifier: Apache-2.0
-- Undo a semaphore try whose reply was lost (data-layout §7), under the try's latch.
-- KEYS[1] the count, KEYS[2] channel, KEYS[3] the try's latch.
-- ARGV[1] publish command(s), ARGV[2] latch TTL ms.
-- 1: the try had taken permits, now given back. 0: it had taken nothing, and a try arriving
-- later takes nothing either (the latch exists).
local taken = redis.call('get', KEYS[3])
redis.call('set', KEYS[3], 0, 'px', ARGV[2])
if taken == false or taken == '0' then
  return 0
end
read_count(KEYS[1])
publish_count(KEYS[2], ARGV[1], redis.call('incrby', KEYS[1], taken))
return 1
