// SPDX-License-Identifier: Apache-2.0
// The one source of relock_test_pch (tests/CMakeLists.txt), the target that owns the tests'
// precompiled header; it compiles nothing of its own.
