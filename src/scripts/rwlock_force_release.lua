-- SPDX-License-Identifier: Apache-2.0
-- Read-write lock: delete it whoever holds it, with every read hold's timeout key, and wake the
-- waiters (data-layout §4). Anything that is not a read-write lock is refused and left as it is:
-- another Redis type, a hash without a `mode` of read/write (a plain lock's hash), or a hash with
-- a value that is not a hold count.
-- KEYS[1] lock hash, KEYS[2] channel, KEYS[3] the key prefix of the timeout keys
-- (rwlock_key_prefix). ARGV[1] message (1: wake every waiter), ARGV[2] publish command (or commands joined by '+': PUBLISH+SPUBLISH).
-- 1: deleted, waiters told. 0: it was free. WRONGTYPE error: not a read-write lock, nothing changed.
local kind = redis.call('type', KEYS[1])['ok']
if kind == 'none' then
  return 0
end
if kind ~= 'hash' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a read-write lock')
end
local fields = redis.call('hgetall', KEYS[1])
local has_mode = false
for i = 1, #fields, 2 do
  local name, value = fields[i], fields[i + 1]
  if name == 'mode' then
    has_mode = value == 'read' or value == 'write'
    if not has_mode then
      return redis.error_reply('WRONGTYPE the key holds a hash that is not a read-write lock (mode ' .. value .. ')')
    end
  elseif not string.match(value, '^%d+$') then
    return redis.error_reply('WRONGTYPE the key holds a hash that is not a read-write lock (field ' .. name .. ')')
  end
end
if not has_mode then
  return redis.error_reply('WRONGTYPE the key holds a hash that is not a read-write lock (no mode)')
end
redis.call('del', KEYS[1])
for i = 1, #fields, 2 do
  local name = fields[i]
  if name ~= 'mode' and string.sub(name, -6) ~= ':write' then
    local prefix = KEYS[3] .. ':' .. name .. ':rwlock_timeout:'
    for n = 1, tonumber(fields[i + 1]) do
      redis.call('del', prefix .. n)
    end
  end
end
for command in string.gmatch(ARGV[2], '[^+]+') do
  redis.call(command, KEYS[2], ARGV[1])
end
return 1
