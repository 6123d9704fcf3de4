-- SPDX-License-Identifier: Apache-2.0
-- Fenced acquire (data-layout §5): the reentrant acquire, and every acquisition (re-entries
-- too) takes the next fencing token.
-- KEYS[1] lock hash, KEYS[2] token counter; ARGV[1] lease ms, ARGV[2] owner field.
-- KEYS[3] (optional) this try's latch: see below.
-- {-1, token, holds}: acquired (holds: the owner's count after it; Redisson's own script returns
-- the first two). {PTTL, -1}: refused (the holder's PTTL, -1 when it has none).
-- WRONGTYPE: the counter is not a non-negative integer, nothing changed.
-- A try whose take-back has run (its latch exists) arrived late: it changes nothing.
if KEYS[3] and redis.call('exists', KEYS[3]) == 1 then
  return {0, -1}
end
local free = redis.call('exists', KEYS[1]) == 0
if free or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  local kind = redis.call('type', KEYS[2])['ok']
  local last = kind == 'string' and redis.call('get', KEYS[2])
  -- Tokens are positive: a negative counter would make a token that reads as a refusal (-1).
  if kind ~= 'none' and not (last and string.match(last, '^%d+$') and #last <= 19) then
    return redis.error_reply('WRONGTYPE ' .. KEYS[2] .. ' holds ' ..
                             (last and ("'" .. last .. "'") or ('a ' .. kind)) ..
                             ', not a fencing token; nothing was changed')
  end
  local token = redis.call('incr', KEYS[2])
  local holds = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {-1, token, holds}
end
return {redis.call('pttl', KEYS[1]), -1}
