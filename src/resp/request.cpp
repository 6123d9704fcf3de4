// SPDX-License-Identifier: Apache-2.0
#include "resp/request.hpp"

#include <hiredis/hiredis.h>

#include <new>

namespace relock::resp {
namespace {

void append_encoded(std::string& out, int argc, const char** argv, const size_t* lens) {
  char* encoded = nullptr;
  int size = redisFormatCommandArgv(&encoded, argc, argv, lens);
  if (size < 0) throw std::bad_alloc();
  out.append(encoded, static_cast<std::size_t>(size));
  redisFreeCommand(encoded);
}

template <class Range>
void encode(std::string& out, const Range& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const auto& arg : args) {
    argv.push_back(arg.data());
    lens.push_back(arg.size());
  }
  append_encoded(out, static_cast<int>(argv.size()), argv.data(), lens.data());
}

}  // namespace

void request::push(std::initializer_list<std::string_view> args) {
  encode(payload_, args);
  ++commands_;
}

void request::push(std::span<const std::string_view> args) {
  encode(payload_, args);
  ++commands_;
}

void request::push(std::span<const std::string> args) {
  encode(payload_, args);
  ++commands_;
}

}  // namespace relock::resp
