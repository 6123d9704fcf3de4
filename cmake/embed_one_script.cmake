# SPDX-License-Identifier: Apache-2.0
file(READ ${IN} body)
file(WRITE ${OUT} "// Generated from ${STEM}.lua; do not edit.\n#include <string_view>\nnamespace relock::scripts {\nextern const std::string_view ${STEM};\nconst std::string_view ${STEM} = R\"relock_lua(${body})relock_lua\";\n}\n")
