-- SPDX-License-Identifier: Apache-2.0
-- Is a count-down latch open (data-layout §7)? One try of a waiting await; reads only.
-- KEYS[1] the count.
-- nil: open (the name holds nothing, or a count of 0 or less). -1: closed.
local count = read_count(KEYS[1])
if count == nil or count <= 0 then
  return nil
end
return -1
