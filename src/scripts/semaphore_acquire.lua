-- SPDX-License-Identifier: Apache-2.0
-- Take permits of a semaphore (data-layout §7), one try of a waiting acquire.
-- KEYS[1] the count, KEYS[2] this try's latch.
-- ARGV[1] permits wanted, ARGV[2] '1' to wait on a semaphore that holds nothing (else refused),
-- ARGV[3] latch TTL ms.
-- nil: taken (the latch remembers how many, for a take-back). -1: not enough permits.
-- NOT_INITIALIZED: the name holds nothing.
if redis.call('exists', KEYS[2]) == 1 then
  return -1  -- this try was taken back before it ran: it grants nothing
end
local available = read_count(KEYS[1])
if available == nil then
  if ARGV[2] ~= '1' then
    return not_initialized(KEYS[1])
  end
  return -1
end
if available < tonumber(ARGV[1]) then
  return -1
end
redis.call('decrby', KEYS[1], ARGV[1])
redis.call('set', KEYS[2], ARGV[1], 'px', ARGV[3])
return nil
