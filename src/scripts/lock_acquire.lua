-- SPDX-License-Identifier: Apache-2.0
-- Reentrant acquire (data-layout §2).
-- KEYS[1] lock hash; ARGV[1] lease ms; ARGV[2] owner field.
-- KEYS[2] (optional) this try's latch: see below.
-- nil: acquired (or re-entered; the TTL goes back to the full lease). Else the holder's PTTL.
-- A try whose take-back has run (its latch exists) arrived late: it changes nothing.
if KEYS[2] and redis.call('exists', KEYS[2]) == 1 then
  return 0
end
local free = redis.call('exists', KEYS[1]) == 0
if free or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
