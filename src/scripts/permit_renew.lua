-- Watchdog renewal of permits (data-layout §7): all KEYS share a slot.
-- KEYS[i] a semaphore's permit expiries; ARGV[1] lease ms; ARGV[i + 1] the permit id there.
-- The new expiry is the server's clock plus the lease. One entry per permit: 1 renewed, 0 gone.
local time = redis.call('time')
local expiry = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) + tonumber(ARGV[1])
local renewed = {}
for i, key in ipairs(KEYS) do
  if redis.call('zscore', key, ARGV[i + 1]) then
    redis.call('zadd', key, expiry, ARGV[i + 1])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
