-- SPDX-License-Identifier: Apache-2.0
-- Delete a fair lock whoever holds it and tell the head waiter (data-layout §3), after
-- fair_queue.lua. The lock's own channel hears it too, for holders that listen for the loss.
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] channel.
-- ARGV[1] message, ARGV[2] now (Unix ms), ARGV[3] publish command (or commands joined by '+'),
-- ARGV[4] how long a head that is told but not listening has to try again (ms).
-- 1: deleted. 0: it was free. WRONGTYPE: not a fair lock's data, nothing changed.
local data, refused = read_fair_data()
if not data then
  return refused
end
if data.free then
  drop_the_dead(data, tonumber(ARGV[2]))
  tell_head(data, KEYS[4], ARGV[1], ARGV[3], tonumber(ARGV[2]), tonumber(ARGV[4]))
  return 0
end
local fields = redis.call('hgetall', KEYS[1])
for i = 2, #fields, 2 do
  if not string.match(fields[i], '^%d+$') then
    return redis.error_reply('WRONGTYPE the key holds a hash that is not a lock (field ' ..
                             fields[i - 1] .. ')')
  end
end
drop_the_dead(data, tonumber(ARGV[2]))
redis.call('del', KEYS[1])
tell_head(data, KEYS[4], ARGV[1], ARGV[3], tonumber(ARGV[2]), tonumber(ARGV[4]))
for command in string.gmatch(ARGV[3], '[^+]+') do
  redis.call(command, KEYS[4], ARGV[1])
end
return 1
