-- SPDX-License-Identifier: Apache-2.0
-- Watchdog renewal of permits (data-layout §7): all KEYS share a slot.
-- KEYS[i] a semaphore's permit expiries; ARGV[1] lease ms; ARGV[i + 1] "<now>:<permit id>": the
-- renewing client's clock (Unix ms, the clock every acquire and reclaim compares with, Redisson's
-- too), then the id's 16 bytes. The new expiry is now + lease. One entry per permit: 1 renewed,
-- 0 gone.
local renewed = {}
for i, key in ipairs(KEYS) do
  local arg = ARGV[i + 1]
  local colon = string.find(arg, ':', 1, true)
  local id = string.sub(arg, colon + 1)
  if redis.call('zscore', key, id) then
    redis.call('zadd', key, tonumber(string.sub(arg, 1, colon - 1)) + tonumber(ARGV[1]), id)
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
