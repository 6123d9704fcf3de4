-- SPDX-License-Identifier: Apache-2.0
-- The head of every release script of the lock family (lock, fair, read and write releases).
-- not_held(latch, ttl, take_back): what a release returns when the owner holds nothing. A
-- take-back (take_back = '1': the undo of a try whose reply was lost, data-layout §8) leaves
-- its latch even then, so a copy of it, or the try it undoes, reaching Redis later changes
-- nothing. The empty value reads as nil.
local function not_held(latch, ttl, take_back)
  if take_back == '1' then
    redis.call('set', latch, '', 'px', ttl)
  end
  return nil
end
