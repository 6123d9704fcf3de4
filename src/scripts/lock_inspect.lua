-- SPDX-License-Identifier: Apache-2.0
-- What a name holds, for client::inspect: the name's key and the lock family's auxiliary keys,
-- read in one call so the snapshot is consistent. Reads only. Each auxiliary key is read only
-- when it has the type its command expects: a key of another type would make the call fail.
-- KEYS[1] the name's key, KEYS[2] fencing token, KEYS[3] fair queue, KEYS[4] fair timeouts,
-- KEYS[5] the prefix of a read-write lock's read-hold timeout keys (rwlock_key_prefix),
-- KEYS[6] a permit-expirable semaphore's permits taken (semaphore_timeout_key).
-- A flat array, `false` for nil (a nil would end a Lua array early):
--   1 TYPE of KEYS[1]   2 its PTTL   3 its hash as HGETALL, or its string, or false
--   4 TYPE of KEYS[2]   5 the token when a string, else false
--   6 TYPE of KEYS[3]   7 the queue, head first, when a list, else empty
--   8 TYPE of KEYS[4]   9 each queued owner's score when a zset (false if it has none)
--  10 for a read-write lock's hash, per field in HGETALL's order: the PTTLs of that owner's
--     read holds 1..count (KEYS[5]:<field>:rwlock_timeout:<n>), empty for others
--  11 TYPE of KEYS[6]  12 its ZCARD when a zset, else 0
--  13 its first 1000 members, soonest to expire first, with their scores (ZRANGE WITHSCORES)
local function type_of(key)
  return redis.call('type', key)['ok']
end

local kind = type_of(KEYS[1])
local body = false
if kind == 'hash' then
  body = redis.call('hgetall', KEYS[1])
elseif kind == 'string' and redis.call('strlen', KEYS[1]) <= 20 then
  -- Only a counter's value is of use, and no 64-bit integer is longer: a large blob stays put.
  body = redis.call('get', KEYS[1])
end

local token_kind = type_of(KEYS[2])
local token = false
if token_kind == 'string' then
  token = redis.call('get', KEYS[2])
end

local queue_kind = type_of(KEYS[3])
local queue = {}
if queue_kind == 'list' then
  queue = redis.call('lrange', KEYS[3], 0, -1)
end

local timeout_kind = type_of(KEYS[4])
local scores = {}
if timeout_kind == 'zset' then
  for i, owner in ipairs(queue) do
    scores[i] = redis.call('zscore', KEYS[4], owner)
  end
end

-- Each read hold of a read-write lock has its own lease: one PTTL per hold, -2 once it expired.
local read_leases = {}
if kind == 'hash' and redis.call('hexists', KEYS[1], 'mode') == 1 then
  for i = 1, #body, 2 do
    local field, count = body[i], tonumber(body[i + 1])
    local leases = {}
    if field ~= 'mode' and count and string.sub(field, -6) ~= ':write' and count <= 1000 then
      for n = 1, count do
        leases[n] = redis.call('pttl', KEYS[5] .. ':' .. field .. ':rwlock_timeout:' .. n)
      end
    end
    read_leases[#read_leases + 1] = leases
  end
end

-- The permits taken: a large semaphore shows its soonest 1000, and how many there are.
local permits_kind = type_of(KEYS[6])
local permits_taken = 0
local permits = {}
if permits_kind == 'zset' then
  permits_taken = redis.call('zcard', KEYS[6])
  permits = redis.call('zrange', KEYS[6], 0, 999, 'withscores')
end

return {kind, redis.call('pttl', KEYS[1]), body, token_kind, token, queue_kind, queue,
        timeout_kind, scores, read_leases, permits_kind, permits_taken, permits}
