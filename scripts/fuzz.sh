#!/usr/bin/env bash
# Fuzzes the core with cargo fuzz (libFuzzer) for a bounded time: each target in fuzz/ runs
# SECONDS (default 60) on one core, starting from the committed corpus (fuzz/corpus/, seeded
# from the examples and tests/vectors by the seed-corpus helper). Corpus entries the fuzzer
# finds go to fuzz/corpus-new/ (not committed); a crash is written to fuzz/artifacts/<target>/
# and ends the run with a non-zero status. Minimise one with
#   RUSTC_BOOTSTRAP=1 cargo fuzz tmin --fuzz-dir fuzz <target> fuzz/artifacts/<target>/crash-...
# copy the minimised input to fuzz/regressions/<target>/ (tests/function/regressions.rs replays
# it in `cargo test`), and fix the core. Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(run_function_bytes composite_spec)

# cargo fuzz needs nightly flags (-Z sanitizer); the stable toolchain accepts them with
# RUSTC_BOOTSTRAP=1.
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

cargo run -q --manifest-path fuzz/Cargo.toml --bin seed-corpus
for target in "${targets[@]}"; do
  mkdir -p "fuzz/corpus-new/$target"
  printf '\n== fuzz %s for %s s\n' "$target" "$seconds"
  # -rss_limit_mb: a request that makes the core allocate without bound is a finding too.
  # -max_len: requests up to 64 KiB, enough for every seed.
  status=0
  cargo fuzz run --fuzz-dir fuzz --sanitizer address "$target" \
    "fuzz/corpus-new/$target" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 >"fuzz/$target.log" 2>&1 || status=$?
  grep -E '(INITED|DONE) |^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|^SUMMARY|^==[0-9]+==' \
    "fuzz/$target.log" || true
  if [ "$status" -ne 0 ]; then
    tail -40 "fuzz/$target.log" >&2
    echo "fuzz: $target FAILED (status $status); see fuzz/$target.log and fuzz/artifacts/$target/" >&2
    exit 1
  fi
done
echo "fuzz: every target ran ${seconds} s without a crash"
