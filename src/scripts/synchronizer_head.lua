-- SPDX-License-Identifier: Apache-2.0
-- The synchronizers' common functions (data-layout §7): the head of every semaphore, permit and
-- latch script, put in front of each when it is loaded. It defines functions and runs nothing.

-- A count under `key`: nil when the key holds nothing. Anything but an integer string is refused
-- (WRONGTYPE) before the script writes anything.
local function read_count(key)
  local raw = redis.pcall('get', key)
  if type(raw) == 'table' then
    error(redis.error_reply('WRONGTYPE ' .. key .. ' holds another Redis type, not a count; ' ..
                            'nothing was changed'))
  end
  if raw == false then
    return nil
  end
  local value = tonumber(raw)
  if value == nil then
    error(redis.error_reply('WRONGTYPE ' .. key .. ' holds a string that is not a count; ' ..
                            'nothing was changed'))
  end
  return value
end

-- Publishes `message` on `channel` with each command of `commands` ('PUBLISH', 'SPUBLISH', or
-- both joined by '+').
local function publish(channel, commands, message)
  for command in string.gmatch(commands, '[^+]+') do
    redis.call(command, channel, message)
  end
end

-- Tells a semaphore's waiters its new count, when there is something to take: a count at or below
-- 0 wakes nobody (and Redisson's waiters throw on one).
local function publish_count(channel, commands, count)
  if tonumber(count) > 0 then
    publish(channel, commands, count)
  end
end

-- A permit-expirable semaphore's permits whose expiry is at or before `now` go back to the
-- count, and waiters hear the new count: what every script on its data does first, whoever's
-- permits they are.
local function reclaim(count_key, timeouts, channel, commands, now)
  local expired = redis.call('zrangebyscore', timeouts, '-inf', now)
  if #expired == 0 then
    return
  end
  for first = 1, #expired, 1000 do
    redis.call('zrem', timeouts, unpack(expired, first, math.min(first + 999, #expired)))
  end
  publish_count(channel, commands, redis.call('incrby', count_key, #expired))
end

-- A semaphore that was never given permits: refused, unless the caller waits for it as for 0.
local function not_initialized(key)
  return redis.error_reply('NOT_INITIALIZED semaphore ' .. key .. ' holds nothing: no permits ' ..
                           'were ever set (try_set_permits or add_permits first)')
end
