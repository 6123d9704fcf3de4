-- SPDX-License-Identifier: Apache-2.0
-- Finds the first element of a delayed queue whose value is ARGV[1]; with ARGV[2] == '1' also
-- removes it from the arrival list and the due-time set. ARGV[3] the client's layout.
-- KEYS[1] arrival list, KEYS[2] due-time sorted set. Returns 1 found, 0 not.
local elements = redis.call('lrange', KEYS[1], 0, -1)
for _, element in ipairs(elements) do
  if value_of(element, ARGV[3]) == ARGV[1] then
    if ARGV[2] == '1' then
      redis.call('lrem', KEYS[1], 1, element)
      redis.call('zrem', KEYS[2], element)
    end
    return 1
  end
end
return 0
