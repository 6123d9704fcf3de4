-- SPDX-License-Identifier: Apache-2.0
-- Watchdog renewal of many holds in one call (data-layout §2): all KEYS share a slot.
-- KEYS[i] lock hash; ARGV[1] lease ms; ARGV[i + 1] the owner field held on KEYS[i].
-- One entry per key: 1 renewed, 0 gone (the hold is lost).
local renewed = {}
for i, key in ipairs(KEYS) do
  if redis.call('hexists', key, ARGV[i + 1]) == 1 then
    redis.call('pexpire', key, ARGV[1])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
