// SPDX-License-Identifier: Apache-2.0
// What librelock.so exports. The library is built with hidden visibility, so only what is
// marked RELOCK_API (the public API) is reachable from outside; internal symbols, and the Asio
// code instantiated inside, stay private to it.
#pragma once

#define RELOCK_API __attribute__((visibility("default")))
