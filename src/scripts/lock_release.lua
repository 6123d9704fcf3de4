-- SPDX-License-Identifier: Apache-2.0
-- Release one hold (data-layout §1 unlock latch, §2 release).
-- KEYS[1] lock hash, KEYS[2] channel, KEYS[3] unlock latch for this request.
-- ARGV[1] message, ARGV[2] lease to restore, ARGV[3] owner field, ARGV[4] publish command (or commands joined by '+': PUBLISH+SPUBLISH),
-- ARGV[5] latch TTL ms, ARGV[6] 1 for a take-back (not_held, release_head.lua).
-- nil: not a holder. 0: still held (re-entered). 1: released, waiters told.
local earlier = redis.call('get', KEYS[3])
if earlier then
  return tonumber(earlier)
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return not_held(KEYS[3], ARGV[5], ARGV[6])
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[3], 0, 'px', ARGV[5])
  return 0
end
redis.call('del', KEYS[1])
for command in string.gmatch(ARGV[4], '[^+]+') do
  redis.call(command, KEYS[2], ARGV[1])
end
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1
