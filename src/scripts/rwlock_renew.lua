-- Watchdog renewal of many read-write lock holds in one call (data-layout §4): all KEYS share a
-- slot. KEYS[i] lock hash; ARGV[1] lease ms; ARGV[i + 1] the owner field (without ':write')
-- holding on KEYS[i].
-- For each key where that owner holds anything (read or write): PEXPIRE that owner's read-hold
-- timeout keys 1..its read count to the lease, never another owner's (a dead reader's
-- keys must run out: redisson/redisson#1458). The timeout keys are named as
-- objects::rwlock_timeout_prefix names them: the hash's name, in braces unless it has a '{'.
-- The hash gets the lease too (in read mode only when that makes it longer).
-- One entry per key: 1 renewed, 0 gone (also when the key is no read-write lock: then nothing
-- is touched, and the rest of the batch is still renewed).
local lease = tonumber(ARGV[1])
local renewed = {}
for i, key in ipairs(KEYS) do
  local owner = ARGV[i + 1]
  renewed[i] = 0
  if redis.call('type', key)['ok'] == 'hash' then
    local mode = redis.call('hget', key, 'mode')
    local reads = tonumber(redis.call('hget', key, owner))
    if (mode == 'read' or mode == 'write') and
        (reads or redis.call('hexists', key, owner .. ':write') == 1) then
      -- In read mode other owners' holds may outlive this lease: never cut the hash short.
      -- In write mode every hold is this owner's, all renewed to the lease right here.
      if mode == 'write' or redis.call('pttl', key) < lease then
        redis.call('pexpire', key, lease)
      end
      if reads then
        local tagged = key
        if not string.find(key, '{', 1, true) then
          tagged = '{' .. key .. '}'
        end
        local prefix = tagged .. ':' .. owner .. ':rwlock_timeout:'
        for n = 1, reads do
          redis.call('pexpire', prefix .. n, lease)
        end
      end
      renewed[i] = 1
    end
  end
end
return renewed
