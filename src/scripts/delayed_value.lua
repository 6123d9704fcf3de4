-- SPDX-License-Identifier: Apache-2.0
-- The value inside a delayed queue's element, whichever Redisson layout packed it: 4.x puts a
-- one-byte id length (8), the id, an 8-byte value length and the value; 3.x an 8-byte number,
-- the 8-byte length and the value. The lengths decide, the client's own layout (`layout`, '3'
-- or '4') looked for first; an element of neither shape is returned whole. Prepended to the
-- delayed_* scripts that read elements.
local function value_of_4(element, size)
  if size >= 17 and string.byte(element, 1) == 8 and struct.unpack('L', element, 10) == size - 17 then
    return string.sub(element, 18)
  end
  return nil
end

local function value_of_3(element, size)
  if size >= 16 and struct.unpack('L', element, 9) == size - 16 then
    return string.sub(element, 17)
  end
  return nil
end

local function value_of(element, layout)
  local size = string.len(element)
  if layout == '3' then
    return value_of_3(element, size) or value_of_4(element, size) or element
  end
  return value_of_4(element, size) or value_of_3(element, size) or element
end
