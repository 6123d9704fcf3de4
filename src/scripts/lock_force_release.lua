-- SPDX-License-Identifier: Apache-2.0
-- Delete the lock whoever holds it, and wake a waiter (data-layout §2). Anything that is not a lock
-- is refused and left as it is: another Redis type, or a hash whose values are not hold counts
-- (a read-write lock's `mode` field excepted).
-- KEYS[1] lock hash, KEYS[2] channel; ARGV[1] message, ARGV[2] publish command (or commands joined by '+': PUBLISH+SPUBLISH).
-- 1: deleted, waiters told. 0: it was free. WRONGTYPE error: not a lock, nothing changed.
local kind = redis.call('type', KEYS[1])['ok']
if kind == 'none' then
  return 0
end
if kind ~= 'hash' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a lock')
end
local fields = redis.call('hgetall', KEYS[1])
for i = 1, #fields, 2 do
  local name, value = fields[i], fields[i + 1]
  local lock_mode = name == 'mode' and (value == 'read' or value == 'write')
  if not lock_mode and not string.match(value, '^%d+$') then
    return redis.error_reply('WRONGTYPE the key holds a hash that is not a lock (field ' .. name .. ')')
  end
end
redis.call('del', KEYS[1])
for command in string.gmatch(ARGV[2], '[^+]+') do
  redis.call(command, KEYS[2], ARGV[1])
end
return 1
