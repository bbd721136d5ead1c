#!/usr/bin/env bash
# Builds the trace-reader fuzzer with clang (libFuzzer, AddressSanitizer, UBSan) and runs it for a
# bounded time on the seeds fuzz_make_seeds writes (this build's format, a header near the 1 MiB
# cap, nesting at and past the depth cap) and the version-1 seeds in fuzz/corpus. Inputs may be as
# large as the header cap plus 64 KiB, so the fuzzer reaches it. Exit status 0 only when it ran clean.
#   bash fuzz/run.sh [SECONDS]       (default 60; the build folder is build-fuzz, or $FUZZ_BUILD)
set -euo pipefail
seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FUZZ_BUILD:-$root/build-fuzz}"

CXX=clang++ cmake -S "$root/fuzz" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 --target fuzz_trace_reader fuzz_make_seeds

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$root"/fuzz/corpus/* "$work"/
"$build/fuzz_make_seeds" "$work"
cd "$work"   # crash-* files, if any, are written here and reported below
set +e
"$build/fuzz_trace_reader" "$work" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -malloc_limit_mb=256 -max_len=1114112 -print_final_stats=1 2>&1 | tail -n 25
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
    [ -e "$f" ] && { mkdir -p "$root/fuzz/findings"; cp "$f" "$root/fuzz/findings/"; echo "fuzz: kept $f in fuzz/findings/"; }
  done
  echo "fuzz: FAILED (exit $status)"
  exit "$status"
fi
echo "fuzz: ran ${seconds}s clean"
