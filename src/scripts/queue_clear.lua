-- SPDX-License-Identifier: Apache-2.0
-- Deletes a queue's list (BlockingQueue::clear), refusing a name that holds anything else: a
-- plain DEL would delete it whatever it is.
-- KEYS[1] the list. Returns 1 deleted, 0 it was absent; a WRONGTYPE error, changing nothing.
local kind = redis.call('type', KEYS[1]).ok
if kind == 'none' then
  return 0
end
if kind ~= 'list' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[1] .. ' holds a ' .. kind .. ', not a queue')
end
return redis.call('del', KEYS[1])
