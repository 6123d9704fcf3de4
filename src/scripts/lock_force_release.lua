-- Delete the lock whoever holds it, and wake a waiter (compat §2).
-- KEYS[1] lock hash, KEYS[2] channel; ARGV[1] message, ARGV[2] publish command.
if redis.call('del', KEYS[1]) == 1 then
  redis.call(ARGV[2], KEYS[2], ARGV[1])
  return 1
end
return 0
