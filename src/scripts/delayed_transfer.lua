-- SPDX-License-Identifier: Apache-2.0
-- Moves the due elements of a delayed queue to its destination (data-layout §9): each one is
-- appended to the destination and leaves the due-time set and the arrival list in this one
-- script, so concurrent transfers (any clients, Java's too) deliver it once.
-- KEYS[1] destination list, KEYS[2] due-time sorted set, KEYS[3] arrival list.
-- ARGV[1] now (Unix ms), ARGV[2] at most this many elements, ARGV[3] the client's layout.
-- Returns {elements moved, the due time of the earliest element left}, the second missing when
-- none is left.
local due = redis.call('zrangebyscore', KEYS[2], 0, ARGV[1], 'limit', 0, ARGV[2])
for _, element in ipairs(due) do
  redis.call('rpush', KEYS[1], value_of(element, ARGV[3]))
  redis.call('lrem', KEYS[3], 1, element)
  redis.call('zrem', KEYS[2], element)
end
local next_due = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
if next_due[2] ~= nil then
  return {#due, next_due[2]}
end
return {#due}
