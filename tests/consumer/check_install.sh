#!/usr/bin/env bash
# check_install.sh BUILD_DIR CONSUMER_DIR CXX SANITIZE
set -euo pipefail
build=$1 consumer=$2 cxx=$3 sanitize=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=""
[[ -n "$sanitize" ]] && flags="-fsanitize=$sanitize"

cmake --install "$build" --prefix "$work/prefix" >/dev/null
lib=$(find "$work/prefix" -name 'librelock.so' -printf '%h\n' | head -1)

# 1. find_package(relock)
cmake -S "$consumer" -B "$work/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$flags" >/dev/null
cmake --build "$work/cmake" >/dev/null
LD_LIBRARY_PATH="$lib" "$work/cmake/consumer"

# 2. pkg-config --cflags --libs relock
export PKG_CONFIG_PATH="$lib/pkgconfig"
# shellcheck disable=SC2046
"$cxx" -std=c++20 $flags "$consumer/consumer.cpp" -o "$work/pc-consumer" \
  $(pkg-config --cflags --libs relock)
LD_LIBRARY_PATH="$lib" "$work/pc-consumer"
