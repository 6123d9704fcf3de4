-- The fair lock's queue (data-layout §3): the head of every fair-lock script, put in front of
-- each when it is loaded (fair_lock_kind.cpp). It defines functions and runs nothing.
-- KEYS[1] the lock hash, KEYS[2] the queue (owner fields, head first), KEYS[3] the deadlines
-- (zset: owner -> Unix ms by the waiter's clock after which it is presumed dead).
--
-- The queue and its deadlines are repaired as they are read, never trusted to agree: an owner in
-- the list with no deadline, or a deadline with no place in the list, is what an interrupted
-- older client can leave behind (redisson/redisson#5989), and neither may stop the queue or
-- break a script with arithmetic on nil.

local function type_of(key)
  return redis.call('type', key)['ok']
end

-- Data that no fair lock writes is refused before anything changes: another Redis type under
-- one of the keys, or a deadline that is not a finite number of milliseconds.
local function refuse_foreign_data()
  for i, expected in ipairs({'hash', 'list', 'zset'}) do
    local found = type_of(KEYS[i])
    if found ~= 'none' and found ~= expected then
      return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' holds a ' .. found ..
                               ', not a fair lock\'s ' .. expected .. '; nothing was changed')
    end
  end
  local scored = redis.call('zrange', KEYS[3], 0, -1, 'WITHSCORES')
  for i = 2, #scored, 2 do
    local deadline = tonumber(scored[i])
    if deadline == nil or deadline ~= deadline or deadline == math.huge or
        deadline == -math.huge then
      return redis.error_reply('WRONGTYPE the deadline of ' .. scored[i - 1] .. ' in ' .. KEYS[3] ..
                               ' is ' .. scored[i] .. ', not a time; nothing was changed')
    end
  end
  return nil
end

local function deadline_of(owner)
  local score = redis.call('zscore', KEYS[3], owner)
  return score and tonumber(score)
end

-- Deadlines of owners with no place in the queue go; then heads whose deadline has passed (or
-- who have none) go, one by one, until a live one heads the queue. Other deadlines stay.
local function drop_the_dead(now)
  local queued = {}
  for _, owner in ipairs(redis.call('lrange', KEYS[2], 0, -1)) do
    queued[owner] = true
  end
  for _, owner in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
    if not queued[owner] then
      redis.call('zrem', KEYS[3], owner)
    end
  end
  while true do
    local head = redis.call('lindex', KEYS[2], 0)
    if not head then
      return
    end
    local deadline = deadline_of(head)
    if deadline and deadline > now then
      return
    end
    redis.call('lpop', KEYS[2])
    if redis.call('lpos', KEYS[2], head) == false then
      redis.call('zrem', KEYS[3], head)
    end
  end
end

-- Everyone behind `owner` moves up one place: their deadlines come one queue timeout earlier.
-- Then `owner` leaves the queue and the deadlines. False when it was not queued.
local function leave_queue(owner, queue_timeout)
  local queue = redis.call('lrange', KEYS[2], 0, -1)
  local found = false
  for _, waiter in ipairs(queue) do
    if found and waiter ~= owner and deadline_of(waiter) then
      redis.call('zincrby', KEYS[3], -queue_timeout, waiter)
    end
    found = found or waiter == owner
  end
  redis.call('lrem', KEYS[2], 0, owner)
  redis.call('zrem', KEYS[3], owner)
  return found
end

-- The head waiter alone is told, on its own channel: `<channel>:<owner>`.
local function tell_head(channel, message, publish)
  local head = redis.call('lindex', KEYS[2], 0)
  if head then
    for command in string.gmatch(publish, '[^+]+') do
      redis.call(command, channel .. ':' .. head, message)
    end
  end
end

-- A queued waiter that tries is alive: its deadline becomes at least `floor`, and each waiter
-- behind it stays at least a queue timeout after the one before, as queueing placed them. So a
-- live waiter is never taken for dead however long the holder keeps the lock (Redisson drops
-- it once the holder outlasts its deadline, and it queues again at the tail).
local function keep_alive(owner, floor, queue_timeout)
  local previous = nil
  local behind = false
  for _, waiter in ipairs(redis.call('lrange', KEYS[2], 0, -1)) do
    behind = behind or waiter == owner
    if behind then
      local wanted = previous and previous + queue_timeout or floor
      local deadline = deadline_of(waiter)
      if not deadline or deadline < wanted then
        redis.call('zadd', KEYS[3], wanted, waiter)
        deadline = wanted
      end
      previous = deadline
    end
  end
end
