-- SPDX-License-Identifier: Apache-2.0
-- The fair lock's queue (data-layout §3): the head of every fair-lock script, put in front of
-- each when it is loaded (fair_lock_kind.cpp). It defines functions and runs nothing.
-- KEYS[1] the lock hash, KEYS[2] the queue (owner fields, head first), KEYS[3] the deadlines
-- (zset: owner -> Unix ms by the waiter's clock after which it is presumed dead).
--
-- A script reads the three keys once (read_fair_data) and works on that copy, writing back only
-- what changes, in as few commands as it can: a script's cost is mostly its number of calls and
-- the size of their replies (a ZRANGE WITHSCORES of seven waiters costs as much as three small calls). The
-- holder's release, the hot path of a handoff, reads less still (read_release_view).
-- The queue and its deadlines are repaired as they are read, never trusted to agree: an owner in
-- the list with no deadline, or a deadline with no place in the list, is what an interrupted
-- older client can leave behind (redisson/redisson#5989), and neither may stop the queue or
-- break a script with arithmetic on nil.

-- Arguments per call when a command takes many (Lua's unpack has a stack limit).
local batch = 1000

local function call_batched(command, key, items)
  for first = 1, #items, batch do
    redis.call(command, key, unpack(items, first, math.min(first + batch - 1, #items)))
  end
end

local function refusal(key, found, expected)
  return redis.error_reply('WRONGTYPE ' .. key .. ' holds a ' .. found .. ', not a fair lock\'s ' ..
                           expected .. '; nothing was changed')
end

-- A finite number of milliseconds, or nil.
local function as_deadline(score)
  local d = tonumber(score)
  if d == nil or d ~= d or d == math.huge or d == -math.huge then
    return nil
  end
  return d
end

-- The lock's type, the queue and the deadlines, or (nil, an error reply) for data that no fair
-- lock writes: another Redis type under one of the keys, or a deadline that is not a finite
-- number of milliseconds. Read before anything is written, so a refusal changes nothing.
local function read_fair_data()
  local lock_type = redis.call('type', KEYS[1])['ok']
  if lock_type ~= 'none' and lock_type ~= 'hash' then
    return nil, refusal(KEYS[1], lock_type, 'hash')
  end
  local read_queue, queue = pcall(redis.call, 'lrange', KEYS[2], 0, -1)
  if not read_queue then
    return nil, refusal(KEYS[2], redis.call('type', KEYS[2])['ok'], 'list')
  end
  local read_deadlines, scored = pcall(redis.call, 'zrange', KEYS[3], 0, -1, 'WITHSCORES')
  if not read_deadlines then
    return nil, refusal(KEYS[3], redis.call('type', KEYS[3])['ok'], 'zset')
  end
  local deadline = {}
  for i = 1, #scored, 2 do
    local d = as_deadline(scored[i + 1])
    if d == nil then
      return nil, redis.error_reply('WRONGTYPE the deadline of ' .. scored[i] .. ' in ' ..
                                    KEYS[3] .. ' is ' .. scored[i + 1] ..
                                    ', not a time; nothing was changed')
    end
    deadline[scored[i]] = d
  end
  return {free = lock_type == 'none', queue = queue, deadline = deadline}
end

-- A release's narrow read, for its common case: `owner` holds the lock, and the queue is empty
-- or its head has a deadline that has not passed. Then three small reads (the owner's count,
-- the first two in the queue, the head's deadline) stand for the whole queue and its deadlines:
-- the count and a view of the data that holds those two (all tell_head reads). Anything else (a
-- caller holding nothing, a dead head, a refusal to word) returns nil and is left to
-- read_fair_data. Strays among the deadlines, and a bad deadline behind the head, are not seen
-- here: they change nothing a release does, and the next acquire or give-up repairs or refuses
-- them.
local function read_release_view(owner, now)
  local read_lock, held = pcall(redis.call, 'hget', KEYS[1], owner)
  local count = read_lock and tonumber(held)
  if not count then
    return nil
  end
  local read_queue, first = pcall(redis.call, 'lrange', KEYS[2], 0, 1)
  if not read_queue then
    return nil
  end
  local head = first[1]
  local read_deadline, score = pcall(redis.call, 'zscore', KEYS[3], head or owner)
  if not read_deadline then
    return nil
  end
  if not head then
    return count, {free = false, queue = {}, deadline = {}}
  end
  local d = as_deadline(score)
  if not d or d <= now then
    return nil
  end
  return count, {free = false, queue = first, deadline = {[head] = d}}
end

-- The same for a script under a request's latch (a release, a give-up): the answer an earlier
-- run of this request stored there comes back as the second value (nothing is touched then).
local function read_latched_fair_data(latch)
  local earlier = redis.call('get', latch)
  if earlier then
    return nil, tonumber(earlier)
  end
  return read_fair_data()
end

local function position_of(data, owner)
  for i, waiter in ipairs(data.queue) do
    if waiter == owner then
      return i
    end
  end
  return nil
end

-- Deadlines of owners with no place in the queue go; then heads whose deadline has passed (or
-- who have none) go, one by one, until a live one heads the queue. Other deadlines stay.
-- `alive` (optional) is the owner running this script: trying, so never taken for dead.
local function drop_the_dead(data, now, alive)
  local places = {}
  for _, waiter in ipairs(data.queue) do
    places[waiter] = (places[waiter] or 0) + 1
  end
  local unscored = {}
  for owner in pairs(data.deadline) do
    if not places[owner] then
      unscored[#unscored + 1] = owner
    end
  end
  local dead = 0
  while dead < #data.queue do
    local head = data.queue[dead + 1]
    local d = data.deadline[head]
    if (d and d > now) or head == alive then
      break
    end
    dead = dead + 1
    places[head] = places[head] - 1
    if places[head] == 0 and d then
      unscored[#unscored + 1] = head
    end
  end
  for _, owner in ipairs(unscored) do
    data.deadline[owner] = nil
  end
  call_batched('zrem', KEYS[3], unscored)
  if dead > 0 then
    redis.call('ltrim', KEYS[2], dead, -1)
    local rest = {}
    for i = dead + 1, #data.queue do
      rest[#rest + 1] = data.queue[i]
    end
    data.queue = rest
  end
end

-- Writes the deadlines in `changed` (owner -> new deadline) in one ZADD; while `data.deferred`
-- is set, only notes them there, for flush_deadlines to write together.
local function write_deadlines(data, changed)
  local pairs_out = {}
  for owner, d in pairs(changed) do
    data.deadline[owner] = d
    if data.deferred then
      data.deferred[owner] = true
    else
      pairs_out[#pairs_out + 1] = d
      pairs_out[#pairs_out + 1] = owner
    end
  end
  call_batched('zadd', KEYS[3], pairs_out)
end

-- Writes what was deferred, in one ZADD: the deadlines still there (one dropped meanwhile is
-- gone from the set already and stays gone).
local function flush_deadlines(data)
  local changed = {}
  for owner in pairs(data.deferred) do
    changed[owner] = data.deadline[owner]
  end
  data.deferred = nil
  write_deadlines(data, changed)
end

-- `owner` leaves the queue and the deadlines, and everyone behind it moves up a place: their
-- deadlines come one queue timeout earlier. False when it was not queued.
local function leave_queue(data, owner, queue_timeout)
  local at = position_of(data, owner)
  if not at then
    if data.deadline[owner] then
      redis.call('zrem', KEYS[3], owner)
      data.deadline[owner] = nil
    end
    return false
  end
  local moved = {}
  local rest = {}
  for i, waiter in ipairs(data.queue) do
    if waiter ~= owner then
      rest[#rest + 1] = waiter
      if i > at and data.deadline[waiter] and not moved[waiter] then
        moved[waiter] = data.deadline[waiter] - queue_timeout
      end
    end
  end
  redis.call('lrem', KEYS[2], 0, owner)
  if data.deadline[owner] then
    redis.call('zrem', KEYS[3], owner)
    data.deadline[owner] = nil
  end
  write_deadlines(data, moved)
  data.queue = rest
  return true
end

-- A queued waiter that tries is alive: its deadline becomes at least `floor`, and each waiter
-- behind it stays at least a queue timeout after the one before, as queueing placed them. So a
-- live waiter is never taken for dead however long the holder keeps the lock (Redisson drops
-- it once the holder outlasts its deadline, and it queues again at the tail).
local function keep_alive(data, owner, floor, queue_timeout)
  local at = position_of(data, owner)
  local raised = {}
  local previous = nil
  for i = at, #data.queue do
    local waiter = data.queue[i]
    local wanted = previous and previous + queue_timeout or floor
    local d = raised[waiter] or data.deadline[waiter]
    if not d or d < wanted then
      raised[waiter] = wanted
      d = wanted
    end
    previous = d
  end
  write_deadlines(data, raised)
end

local function publish_to(channel, message, publish)
  local heard = 0
  for command in string.gmatch(publish, '[^+]+') do
    heard = heard + redis.call(command, channel, message)
  end
  return heard
end

-- The head waiter alone is told, on its own channel: `<channel>:<owner>`. A head nobody hears
-- (it died, or lost its pub/sub connection) has `unheard_timeout` ms to try again before it
-- counts as dead: its deadline comes that close (by the later of the caller's clock and the
-- server's, so neither a slow clock nor a resent call writes one already past), and the waiter
-- behind it is told too, to look again by then. So a queue a crash left behind clears in that
-- much per dead waiter instead of the whole wait timeout. 0 turns this off (relock sends 0 with
-- classic pub/sub in a Cluster, where PUBLISH counts only the node's own listeners). `caller`
-- (optional), the waiter running this script, is never told: it is awake.
local function tell_head(data, channel, message, publish, now, unheard_timeout, caller)
  local head = data.queue[1]
  if not head then
    return
  end
  local heard = publish_to(channel .. ':' .. head, message, publish)
  if heard > 0 or unheard_timeout <= 0 then
    return
  end
  local server = redis.call('time')
  local cap = math.max(now, tonumber(server[1]) * 1000 + math.floor(tonumber(server[2]) / 1000)) +
                  unheard_timeout
  if data.deadline[head] and data.deadline[head] > cap then
    write_deadlines(data, {[head] = cap})
  end
  local next_in_line = data.queue[2]
  if next_in_line and next_in_line ~= head and next_in_line ~= caller then
    publish_to(channel .. ':' .. next_in_line, message, publish)
  end
end

