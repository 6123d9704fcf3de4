-- SPDX-License-Identifier: Apache-2.0
-- Non-reentrant acquire (data-layout §2): same data, but the owner may not take it twice.
-- KEYS[1] lock hash; ARGV[1] lease ms; ARGV[2] owner field.
-- KEYS[2] (optional) this try's latch: see below.
-- A try whose take-back has run (its latch exists) arrived late: it changes nothing.
if KEYS[2] and redis.call('exists', KEYS[2]) == 1 then
  return 0
end
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  -- A message after the code: Redis 7 prefixes a lone word with ERR.
  return redis.error_reply('NON_REENTRANT_REACQUIRE the owner already holds this lock')
end
return redis.call('pttl', KEYS[1])
