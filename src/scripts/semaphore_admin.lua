-- SPDX-License-Identifier: Apache-2.0
-- A semaphore's administration (data-layout §7), plain or permit-expirable.
-- KEYS[1] the count, KEYS[2] channel, KEYS[3] (permit-expirable only) the permits' expiries.
-- ARGV[1] the operation, ARGV[2] its number, ARGV[3] publish command(s), ARGV[4] now (Unix ms),
-- ARGV[5] a permit id (16 bytes) for 'lease'.
--   available       -> the count (0 when absent)
--   acquired        -> permits held and not expired
--   drain           -> the permits taken (the count before, when above 0), now 0
--   try_set n       -> 1 set (only when absent), 0 not
--   add n           -> the new count (may go negative); an error, changing nothing, when the
--                      total (taken ones included) would leave a Java int's range
--   set n           -> available + acquired made n; the new count
--   lease ms        -> 1 the permit now expires ms from now, 0 no such permit
local op = ARGV[1]
local available = read_count(KEYS[1])
local timeouts = KEYS[3]
if timeouts then
  reclaim(KEYS[1], timeouts, KEYS[2], ARGV[3], ARGV[4])
  available = read_count(KEYS[1])
end
local held = 0
if timeouts then
  held = redis.call('zcard', timeouts)
end
if op == 'available' then
  return available or 0
elseif op == 'acquired' then
  return held
elseif op == 'drain' then
  -- Nothing to take from a count at or below 0 (Redisson sets it to 0, adding permits).
  if available == nil or available <= 0 then
    return 0
  end
  redis.call('set', KEYS[1], 0, 'keepttl')
  return available
elseif op == 'try_set' then
  if available ~= nil then
    return 0
  end
  redis.call('set', KEYS[1], ARGV[2])
  publish_count(KEYS[2], ARGV[3], ARGV[2])
  return 1
elseif op == 'add' then
  -- Redisson reads the count as a Java int: the total (taken permits come back to it) must stay
  -- in its range, or a Java client of the same data fails.
  local total = (available or 0) + held + tonumber(ARGV[2])
  if total > 2147483647 or total < -2147483648 then
    return redis.error_reply('ERR adding ' .. ARGV[2] .. ' permits would make ' ..
                             string.format('%.0f', total) .. ' in all, outside a Java int ' ..
                             '(-2147483648 to 2147483647), which Redisson reads them as; ' ..
                             'nothing was changed')
  end
  local value = redis.call('incrby', KEYS[1], ARGV[2])
  publish_count(KEYS[2], ARGV[3], value)
  return value
elseif op == 'set' then
  local value = tonumber(ARGV[2]) - held
  if available ~= value then
    redis.call('set', KEYS[1], value, 'keepttl')
    publish_count(KEYS[2], ARGV[3], value)
  end
  return value
elseif op == 'lease' then
  if not redis.call('zscore', timeouts, ARGV[5]) then
    return 0
  end
  redis.call('zadd', timeouts, tonumber(ARGV[4]) + tonumber(ARGV[2]), ARGV[5])
  return 1
end
return redis.error_reply('ERR unknown semaphore operation ' .. op)
