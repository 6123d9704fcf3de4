-- SPDX-License-Identifier: Apache-2.0
-- Reads a queue name for client::inspect_queue, changing nothing (data-layout §9).
-- KEYS[1] the destination, KEYS[2] the delayed queue's arrival list, KEYS[3] its due-time set.
-- Returns {type of KEYS[1], its length (0 unless a list), elements not yet due, the earliest
-- due time or false}. WRONGTYPE when a delayed-queue key holds another type: no delayed queue
-- can work there, and saying "nothing delayed" would hide it.
for i, wanted in ipairs({'list', 'zset'}) do
  local found = redis.call('type', KEYS[i + 1]).ok
  if found ~= wanted and found ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. KEYS[i + 1] .. ' holds a ' .. found .. ', not the ' ..
                             wanted .. ' of a delayed queue')
  end
end
local kind = redis.call('type', KEYS[1]).ok
local length = 0
if kind == 'list' then
  length = redis.call('llen', KEYS[1])
end
local delayed = 0
if redis.call('type', KEYS[2]).ok == 'list' then
  delayed = redis.call('llen', KEYS[2])
end
local next_due = false
if redis.call('type', KEYS[3]).ok == 'zset' then
  local earliest = redis.call('zrange', KEYS[3], 0, 0, 'WITHSCORES')
  if earliest[2] ~= nil then
    next_due = earliest[2]
  end
end
return {kind, length, delayed, next_due}
