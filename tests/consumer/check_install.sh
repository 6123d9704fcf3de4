#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_install.sh BUILD_DIR SOURCE_DIR CXX [SANITIZE]
#
# Installs relock from BUILD_DIR into a temp prefix and uses it the ways the README tells users
# to, with only that prefix to go on:
#   1. librelock.so exports names in namespace relock and nothing else (nm -D, c++filt);
#      the installed CMake and pkg-config files name no path of the source or build tree;
#   2. find_package(relock): tests/consumer and examples/ build (-Wall -Wextra -Werror);
#   3. pkg-config --cflags --libs relock: the consumer and the README's example build (the flags
#      are the same for every source, and each example costs ~10 s to compile under ASan);
#   4. every program built runs without LD_LIBRARY_PATH and loads librelock.so from the prefix;
#      consumer (no server needed) runs; every example runs against a private redis-server and
#      exits 0 (each checks what it shows, so a run is a test), the README's in both builds;
#   5. the README's example (the first ```cpp block under "## Use") is examples/quickstart.cpp,
#      word for word, so the README's code is what steps 2-4 built and ran;
#   6. find_package(relock) where the Asio headers cannot be found fails, saying what to install.
# SANITIZE (e.g. address,undefined) builds the programs with -fsanitize=SANITIZE, as relock was.
set -euo pipefail
build=$1 source=$2 cxx=$3 sanitize=${4:-}
consumer=$source/tests/consumer
examples=$source/examples

# Without symlinks: paths are compared with what ldd and redis-server report.
work=$(cd "$(mktemp -d "${TMPDIR:-/tmp}/relock-install.XXXXXX")" && pwd -P)
redis_pid=
cleanup() {
  if [[ -n "$redis_pid" ]]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

step() { echo "== $*"; }
fail() {
  echo "check_install: FAILED: $*" >&2
  exit 1
}
# Runs a command with its output kept aside; shows it only when the command fails.
quiet() {
  if ! "$@" >"$work/out.log" 2>&1; then
    cat "$work/out.log" >&2
    fail "$*"
  fi
}
# Runs a built program as a user would: no LD_LIBRARY_PATH, and bounded in time.
run() { env -u LD_LIBRARY_PATH timeout 60 "$@"; }

flags=(-Wall -Wextra -Werror)
[[ -n "$sanitize" ]] && flags+=("-fsanitize=$sanitize")

# ---- install ----
step "cmake --install into a temp prefix"
prefix=$work/prefix
quiet cmake --install "$build" --prefix "$prefix"
so=$(find "$prefix" -name librelock.so | head -1)
[[ -n "$so" ]] || fail "no librelock.so under $prefix"
lib=$(dirname "$so")

# Checks that `program` loads librelock.so from the prefix (not from a copy elsewhere on the
# system, which would make "runs without LD_LIBRARY_PATH" prove nothing).
loads_from_prefix() {
  local found
  found=$(env -u LD_LIBRARY_PATH ldd "$1" | awk '$1 ~ /^librelock\.so/ { print $3 }')
  [[ "$found" == "$lib"/librelock.so* ]] ||
    fail "$1 loads librelock.so from '${found:-nowhere}', not from $lib"
}

# ---- 1. what the installed files show ----
step "nm -D: librelock.so exports only namespace relock"
# Defined dynamic symbols (type A: version nodes, not code or data), demangled. Allowed: names
# in namespace relock, and the typeinfo, vtables, guard variables and thunks of relock's types.
# A function template's demangled name starts with its return type, so a name that c++filt
# shows otherwise is also allowed when its mangled form is a nested name in relock (_ZN6relock,
# _ZNK6relock...).
nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' | sed 's/@.*//' >"$work/mangled"
[[ -s "$work/mangled" ]] || fail "librelock.so exports nothing"
c++filt <"$work/mangled" >"$work/demangled"
special='^((typeinfo|typeinfo name|vtable|VTT|construction vtable|guard variable) for |(non-)?virtual thunk to |covariant return thunk to )?'
paste -d '\t' "$work/mangled" "$work/demangled" |
  awk -F '\t' -v special="$special" '
    { name = $2; sub(special, "", name) }
    name !~ /^relock::/ && $1 !~ /^_ZN[VKRO]*6relock/ { print "  " $2 }' >"$work/foreign"
if [[ -s "$work/foreign" ]]; then
  cat "$work/foreign" >&2
  fail "librelock.so exports $(wc -l <"$work/foreign") names outside namespace relock (above)"
fi
echo "$(sort -u "$work/demangled" | wc -l) names, all in relock"

step "installed CMake and pkg-config files name no path of the source or build tree"
for tree in "$source" "$build"; do
  if grep -rlF "$tree" "$lib/cmake" "$lib/pkgconfig"; then
    fail "the files above name $tree"
  fi
done

# ---- 2. find_package(relock) ----
step "find_package(relock): tests/consumer and examples/"
for project in "$consumer" "$examples"; do
  dir=$work/cmake-$(basename "$project")
  quiet cmake -S "$project" -B "$dir" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="${flags[*]}"
  quiet cmake --build "$dir"
done
cmake_consumer=$work/cmake-consumer/consumer
# Every examples/*.cpp is an example, and examples/CMakeLists.txt must build each one.
example_names=()
for src in "$examples"/*.cpp; do
  name=$(basename "$src" .cpp)
  [[ -x "$work/cmake-examples/$name" ]] || fail "examples/CMakeLists.txt does not build $name"
  example_names+=("$name")
done

# ---- 3. pkg-config ----
step "pkg-config --cflags --libs relock: the consumer and the README's example"
export PKG_CONFIG_PATH=$lib/pkgconfig
[[ "$(pkg-config --variable=prefix relock)" == "$prefix" ]] ||
  fail "pkg-config finds another relock.pc: $(pkg-config --path relock)"
read -r -a pc_flags <<<"$(pkg-config --cflags --libs relock)"
echo "pkg-config: ${pc_flags[*]}"
for src in "$consumer/consumer.cpp" "$examples/quickstart.cpp"; do
  quiet "$cxx" -std=c++20 "${flags[@]}" "$src" -o "$work/pc-$(basename "$src" .cpp)" \
    "${pc_flags[@]}"
done

# ---- 4. run, without LD_LIBRARY_PATH ----
step "the programs run without LD_LIBRARY_PATH"
examples_built=("$work/pc-quickstart")
for name in "${example_names[@]}"; do
  examples_built+=("$work/cmake-examples/$name")
done
for program in "$cmake_consumer" "$work/pc-consumer" "${examples_built[@]}"; do
  loads_from_prefix "$program"
done
run "$cmake_consumer"
run "$work/pc-consumer"

command -v redis-server >/dev/null || fail "redis-server is not on PATH (scripts/setup installs it)"
command -v redis-cli >/dev/null || fail "redis-cli is not on PATH (scripts/setup installs it)"
# A private server on a free loopback port: pick one below the ephemeral range, and try again
# when it is taken. The server is ours when it answers with our temp dir as its dir. `timeout`
# bounds its life even if this script is killed before its trap runs.
port=
for attempt in 1 2 3 4 5; do
  candidate=$((20000 + RANDOM % 12000))
  timeout -k 5 240 redis-server --port "$candidate" --bind 127.0.0.1 --save '' \
    --appendonly no --daemonize no --dir "$work" >"$work/redis.log" 2>&1 &
  redis_pid=$!
  for _ in $(seq 100); do  # 5 s
    kill -0 "$redis_pid" 2>/dev/null || break  # it exited: the port is taken
    if [[ "$(redis-cli -p "$candidate" --raw config get dir 2>/dev/null | tail -1)" == "$work" ]]
    then
      port=$candidate
      break 2
    fi
    sleep 0.05
  done
  kill "$redis_pid" 2>/dev/null || true
  wait "$redis_pid" 2>/dev/null || true
  redis_pid=
done
if [[ -z "$port" ]]; then
  cat "$work/redis.log" >&2
  fail "could not start redis-server on a free loopback port (5 tries)"
fi
echo "redis-server on 127.0.0.1:$port"
# Each example takes the URL as its argument (quickstart, the README's, reads $RELOCK_URL). The
# README's runs twice on the same server (pkg-config's build, then CMake's), so the second run
# also shows that it runs again on what the first one left.
url=redis://127.0.0.1:$port
for program in "${examples_built[@]}"; do
  echo "-- ${program#"$work/"}"
  RELOCK_URL=$url run "$program" "$url" || fail "${program#"$work/"} $url exited with $?"
done

# ---- 5. the README's example ----
step "README's example is examples/quickstart.cpp"
readme_example() {
  awk '/^## / { use = ($0 == "## Use") }
       use && inblock && /^```$/ { exit }
       inblock { print }
       use && /^```cpp$/ { inblock = 1 }' "$source/README.md"
}
if ! diff -u <(readme_example) "$examples/quickstart.cpp" >"$work/readme.diff"; then
  cat "$work/readme.diff" >&2
  fail "README.md's example (first \`\`\`cpp block under ## Use) differs from examples/quickstart.cpp"
fi

# ---- 6. no Asio ----
step "find_package(relock) without the Asio headers says what to install"
# Include searches re-rooted into an empty directory: asio.hpp is found nowhere, relock's
# package still is.
mkdir "$work/empty-root"
if cmake -S "$consumer" -B "$work/cmake-no-asio" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_FIND_ROOT_PATH="$work/empty-root" \
  -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY >"$work/no-asio.log" 2>&1; then
  fail "find_package(relock) succeeded with no asio.hpp to be found"
fi
if ! tr -s ' \n' ' ' <"$work/no-asio.log" | grep -q "apt install libasio-dev"; then
  cat "$work/no-asio.log" >&2
  fail "find_package(relock) failed without Asio but did not say what to install"
fi

echo "check_install: all passed"
