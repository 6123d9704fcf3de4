-- SPDX-License-Identifier: Apache-2.0
-- Watchdog renewal of many read-write lock holds in one call (data-layout §4): all KEYS share a
-- slot, and every key the call touches is named in KEYS.
-- ARGV[1] lease ms; then two entries per hold: its owner field (a write hold's ends in ':write')
-- and n, the number of its read-hold timeout keys. KEYS has, per hold, the lock hash and then
-- those n timeout keys (layout::rwlock_timeout_prefix .. ':' .. 1..n; n is 0 for a write hold).
-- A hold is there when its field is in the hash: then the timeout keys named get the lease, and
-- the hash too (in read mode only when that makes it longer: other readers' leases count).
-- Nothing else is touched: another owner's timeout keys must run out (a dead reader's renewed
-- by a survivor stayed alive for ever in redisson/redisson#1458).
-- One entry per hold: 1 renewed, 0 gone (also when the key is no read-write lock: then nothing
-- is touched, and the rest of the batch is still renewed).
local lease = tonumber(ARGV[1])
local renewed = {}
local k = 1
for i = 1, (#ARGV - 1) / 2 do
  local key = KEYS[k]
  local field = ARGV[2 * i]
  local n = tonumber(ARGV[2 * i + 1])
  renewed[i] = 0
  if redis.call('type', key)['ok'] == 'hash' then
    local mode = redis.call('hget', key, 'mode')
    if (mode == 'read' or mode == 'write') and redis.call('hexists', key, field) == 1 then
      if mode == 'write' or redis.call('pttl', key) < lease then
        redis.call('pexpire', key, lease)
      end
      for t = k + 1, k + n do
        redis.call('pexpire', KEYS[t], lease)
      end
      renewed[i] = 1
    end
  end
  k = k + 1 + n
end
return renewed
