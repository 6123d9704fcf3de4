-- SPDX-License-Identifier: Apache-2.0
-- Fair release (data-layout §1 unlock latch, §3), after fair_queue.lua and release_head.lua.
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] channel (each waiter listens on
-- <channel>:<owner>), KEYS[5] unlock latch for this request.
-- ARGV[1] message, ARGV[2] lease to restore, ARGV[3] owner field, ARGV[4] now (Unix ms),
-- ARGV[5] publish command (or commands joined by '+'), ARGV[6] latch TTL ms, ARGV[7] how long a
-- head that is told but not listening has to try again (ms), ARGV[8] 1 for a take-back
-- (not_held, release_head.lua).
-- nil: not a holder (a free lock's head waiter is told all the same). 0: still held
-- (re-entered). 1: released, the head waiter told.
local earlier = redis.call('get', KEYS[5])
if earlier then
  return tonumber(earlier)
end
local now = tonumber(ARGV[4])
-- The common case, the holder releasing with a live head (or nobody) queued, reads three
-- values instead of the whole queue and its deadlines (read_release_view).
local count, data = read_release_view(ARGV[3], now)
if not count then
  local refused
  data, refused = read_fair_data()
  if not data then
    return refused
  end
  drop_the_dead(data, now)
  if data.free then
    tell_head(data, KEYS[4], ARGV[1], ARGV[5], now, tonumber(ARGV[7]))
    return not_held(KEYS[5], ARGV[6], ARGV[8])
  end
  count = tonumber(redis.call('hget', KEYS[1], ARGV[3]))
  if not count then
    return not_held(KEYS[5], ARGV[6], ARGV[8])
  end
end
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[3], -1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[5], 0, 'px', ARGV[6])
  return 0
end
redis.call('del', KEYS[1])
tell_head(data, KEYS[4], ARGV[1], ARGV[5], now, tonumber(ARGV[7]))
redis.call('set', KEYS[5], 1, 'px', ARGV[6])
return 1
