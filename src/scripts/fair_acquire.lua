-- SPDX-License-Identifier: Apache-2.0
-- Fair acquire (data-layout §3), after fair_queue.lua.
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] channel.
-- KEYS[5] (optional) this try's latch: see below.
-- ARGV[1] lease ms, ARGV[2] owner field, ARGV[3] queue timeout ms, ARGV[4] now (Unix ms),
-- ARGV[5] 'wait': a waiting acquire, which joins the queue when refused; 'once': never queues.
-- ARGV[6] '1' reentrant, '0' not (a second acquire by the holder is refused).
-- ARGV[7] how long a head that is told but not listening has to try again (ms); ARGV[8] publish
-- command (or commands joined by '+').
-- nil: acquired. An integer: refused, and how long to wait before trying again (ms): until the
-- holder's lease ends or the head's deadline passes, whichever is first; -1 when the holder set
-- no TTL and nothing else can change. WRONGTYPE: not a fair lock's data, nothing changed.
-- A try whose take-back has run (its latch exists) arrived late: it changes nothing.
if KEYS[5] and redis.call('exists', KEYS[5]) == 1 then
  return 0
end
local data, refused = read_fair_data()
if not data then
  return refused
end
local lease, owner = ARGV[1], ARGV[2]
local queue_timeout, now = tonumber(ARGV[3]), tonumber(ARGV[4])
drop_the_dead(data, now, owner)

if data.free and (not data.queue[1] or data.queue[1] == owner) then
  if data.queue[1] then
    data.deferred = {}  -- those behind move up, and the new head's turn starts: one ZADD
    leave_queue(data, owner, queue_timeout)
    drop_the_dead(data, now)  -- the new head may be one that was queued without a deadline
    -- The new head's turn starts now: it has the lease and a queue timeout from here, whatever
    -- its deadline was (it may have been brought close while it was not heard).
    if data.queue[1] then
      keep_alive(data, data.queue[1], now + tonumber(lease) + queue_timeout, queue_timeout)
    end
    flush_deadlines(data)
  end
  redis.call('hset', KEYS[1], owner, 1)
  redis.call('pexpire', KEYS[1], lease)
  return nil
end
if not data.free and redis.call('hexists', KEYS[1], owner) == 1 then
  if ARGV[6] == '0' then
    return redis.error_reply('NON_REENTRANT_REACQUIRE the owner already holds this lock')
  end
  redis.call('hincrby', KEYS[1], owner, 1)
  redis.call('pexpire', KEYS[1], lease)
  return nil
end

local ttl = data.free and -2 or redis.call('pttl', KEYS[1])
local holder_left = math.max(ttl, 0)
if position_of(data, owner) then
  keep_alive(data, owner, now + holder_left + queue_timeout, queue_timeout)
elseif ARGV[5] == 'wait' then
  -- At the tail, a queue timeout after the waiter before it (or after the holder's lease).
  local last = data.queue[#data.queue]
  local after = math.max(last and data.deadline[last] or 0, now + holder_left)
  redis.call('zadd', KEYS[3], after + queue_timeout, owner)
  redis.call('rpush', KEYS[2], owner)
  data.queue[#data.queue + 1] = owner
  data.deadline[owner] = after + queue_timeout
end

local head = data.queue[1]
if data.free and head and head ~= owner then
  -- Free, yet somebody else's turn: the head may have missed its message, or be dead. Tell it;
  -- nobody listening brings its deadline close.
  tell_head(data, KEYS[4], '0', ARGV[8], now, tonumber(ARGV[7]), owner)
end
local wait = ttl
if head and head ~= owner then
  local until_head_dies = math.ceil(data.deadline[head] - now)
  if wait < 0 or until_head_dies < wait then
    wait = until_head_dies
  end
end
return wait
