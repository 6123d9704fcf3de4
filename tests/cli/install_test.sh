#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `cmake --install` puts relock's man page and bash completion where man and bash-completion look,
# the page renders without warnings (when man is installed), and the completion script completes.
#   tests/cli/install_test.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: install_test.sh BUILD_DIR}
prefix=$(mktemp -d "${TMPDIR:-/tmp}/relock-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT

fail() {
  echo "install_test: $*" >&2
  exit 1
}

cmake --install "$build" --prefix "$prefix" >/dev/null
[[ -x $prefix/bin/relock ]] || fail "no bin/relock under $prefix"
page=$prefix/share/man/man1/relock.1
completion=$prefix/share/bash-completion/completions/relock
[[ -f $page ]] || fail "no share/man/man1/relock.1"
[[ -f $completion ]] || fail "no share/bash-completion/completions/relock"

if command -v man >/dev/null; then
  warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) || fail "man -l failed"
  [[ -z $warnings ]] || fail "man -l warns: $warnings"
  rendered=$(MANWIDTH=80 man -l "$page" 2>/dev/null)
  for word in run status queue semaphore unlock demo "EXIT STATUS" --raw; do
    grep -q -- "$word" <<<"$rendered" || fail "the page says nothing of $word"
  done
else
  echo "install_test: man is not installed; the page's rendering is not checked"
fi

# Every subcommand of --help has its line in the page.
for sub in $("$prefix/bin/relock" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NR > 1 && NF {print $1}'); do
  grep -q "^\.SS $sub\$" "$page" || fail "relock --help lists $sub; the page has no section for it"
done

completes() {  # completes WORDS... : what _relock offers for the last word
  bash --norc --noprofile -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
    _relock
    echo "${COMPREPLY[*]}"' completes "$completion" "$@"
}
expect() {  # expect WANTED WORDS...
  local wanted=$1
  shift
  local got
  got=$(completes "$@")
  [[ " $got " == *" $wanted "* ]] || fail "completing '$*' offers '$got', not $wanted"
}
bash --norc --noprofile -c 'source "$1" && complete -p relock' _ "$completion" >/dev/null ||
  fail "the completion script does not register _relock for relock"
expect run relock ru
expect semaphore relock se
expect --kind relock run --k
expect fenced relock run --kind fe
expect --raw relock queue take --r
expect take relock queue t
expect release relock semaphore r
expect sharded relock --pubsub sh
expect --force relock unlock --f
expect doctor relock doc
expect --once relock top --on
expect waiters relock top --sort wa
expect --tls-insecure-skip-verify relock --tls-i
expect --tls relock demo --tl
expect "$page" relock --tls-ca "$page"
expect --wait relock --tls-ca ca.pem run --wa  # a TLS flag's value is no subcommand
echo "install_test: ok ($prefix)"
