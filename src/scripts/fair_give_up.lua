-- SPDX-License-Identifier: Apache-2.0
-- A fair waiter gives up its place (data-layout §3), after fair_queue.lua: those behind it move
-- up a place, and when the lock is free the new head is told at once (with Redisson it sleeps
-- out its timer). Under a latch, as a release, so a resend never moves anyone up twice.
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] channel, KEYS[5] latch.
-- ARGV[1] owner field, ARGV[2] queue timeout ms, ARGV[3] now (Unix ms), ARGV[4] message,
-- ARGV[5] publish command (or commands joined by '+'), ARGV[6] latch TTL ms, ARGV[7] how long a
-- head that is told but not listening has to try again (ms).
-- 1: it left the queue. 0: it was not queued.
local data, answer = read_latched_fair_data(KEYS[5])
if not data then
  return answer
end
local left = leave_queue(data, ARGV[1], tonumber(ARGV[2])) and 1 or 0
drop_the_dead(data, tonumber(ARGV[3]))
if left == 1 and data.free then
  tell_head(data, KEYS[4], ARGV[4], ARGV[5], tonumber(ARGV[3]), tonumber(ARGV[7]))
end
redis.call('set', KEYS[5], left, 'px', ARGV[6])
return left
