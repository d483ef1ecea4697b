#!/usr/bin/env bash
# The portability stage: the golden-vector, snapshot-digest and conformance tests, cross-built
# for s390x (64-bit, big-endian) and i386 (32-bit) and run under qemu-user, so that every vector
# and digest is checked on another byte order and another word size. Installs nothing: needs
# crossbuild-essential-s390x, crossbuild-essential-i386 and qemu-user, with catch2 and
# libxxhash-dev (header-only, taken from the host). KEYPLACE_CROSS_TIMEOUT bounds the whole
# stage (seconds, default 1200).
set -euo pipefail
cd "$(dirname "$0")/../.."

deadline=$(( $(date +%s) + ${KEYPLACE_CROSS_TIMEOUT:-1200} ))
bounded() {
  local left=$(( deadline - $(date +%s) ))
  if [ "$left" -le 0 ]; then
    echo "cross: out of time" >&2
    exit 1
  fi
  timeout "$left" "$@"
}

for preset in cross-s390x cross-i386; do
  start=$(date +%s)
  echo "cross: $preset"
  bounded cmake --preset "$preset"
  bounded cmake --build --preset "$preset"
  # The host's /usr/include holds amd64 headers, and Debian's cross g++ searches it last: only
  # the build tree's copies of xxhash.h and catch2/catch.hpp may stand in for host headers.
  if ninja -C "build/$preset" -t deps | grep -E '^ +/usr/include/'; then
    echo "cross: $preset compiled the host headers above" >&2
    exit 1
  fi
  bounded ctest --preset "$preset"
  echo "cross: $preset done in $(( $(date +%s) - start ))s"
done
