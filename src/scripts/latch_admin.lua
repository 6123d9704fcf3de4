-- SPDX-License-Identifier: Apache-2.0
-- A count-down latch's writes (data-layout §7).
-- KEYS[1] the count, KEYS[2] channel. ARGV[1] the operation, ARGV[2] its number,
-- ARGV[3] publish command(s).
--   try_set n  -> 1 set and '1' published (only when absent), 0 not
--   down       -> the count after (the key deleted at 0 or less; '0' published at exactly 0)
--   delete     -> 1 deleted and '0' published, 0 it was open
--   count      -> the count (0 when open); writes nothing
local op = ARGV[1]
local count = read_count(KEYS[1])
if op == 'count' then
  return math.max(count or 0, 0)
elseif op == 'try_set' then
  if count ~= nil then
    return 0
  end
  redis.call('set', KEYS[1], ARGV[2])
  publish(KEYS[2], ARGV[3], '1')
  return 1
elseif op == 'down' then
  if count == nil then
    return 0
  end
  local after = redis.call('decr', KEYS[1])
  if after <= 0 then
    redis.call('del', KEYS[1])
  end
  if after == 0 then
    publish(KEYS[2], ARGV[3], '0')
  end
  return after
elseif op == 'delete' then
  if count == nil then
    return 0
  end
  redis.call('del', KEYS[1])
  publish(KEYS[2], ARGV[3], '0')
  return 1
end
return redis.error_reply('ERR unknown latch operation ' .. op)
