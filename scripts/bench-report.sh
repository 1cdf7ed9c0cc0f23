#!/usr/bin/env bash
# Writes the top screen of BENCHMARKS.md: the figures of the packaged build, in one run.
#   1. the two WebAssembly builds (scripts/build-component.sh, scripts/build-wasm.sh): bytes;
#   2. scripts/bench-e2e.sh: ours, the reply floor (the same bytes) and the Python and TypeScript
#      SDK peers, plain and with live schemas, at 10 and 100 repositories, once the builds are
#      done (they would load the machine it measures);
#   3. callgrind: instructions per call of decode, run and encode (benches/e2e/profile.rs) of the
#      bodies that run wrote;
# then it replaces what lies between the `bench-report` markers of BENCHMARKS.md (or of --output
# FILE) with a header naming this script and the commit, and the tables, and the README's line
# after its `bench-report: headline` marker with the headline.
#
#   scripts/bench-report.sh [--output FILE] [--from-last-run] [bench-e2e.sh options]
#
# The default run is `--sizes 10,100 --requests 2000 --concurrency 8 --rounds 3 --scenarios
# plain,live` (2,000 calls a round, as ../shared/bench measures its peers); bench-e2e.sh options
# given here replace those defaults one by one (`--requests 200 --rounds 1` to try the script out). The table needs both
# sizes: a run without one of them leaves its cells "-", and tests/repo/benchmarks.rs fails on it.
# `--from-last-run` measures nothing and writes the block again from the last run's figures
# (target/bench-report/).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
# shellcheck source=lib/install.sh
. scripts/lib/install.sh

output=BENCHMARKS.md
reuse=no
sizes=10,100 requests=2000 concurrency=8 rounds=3 scenarios=plain,live
passed=()
while [ $# -gt 0 ]; do
  case "$1" in
    --output) output=$2; shift 2 ;;
    --from-last-run) reuse=yes; shift ;;
    --sizes) sizes=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --concurrency) concurrency=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --scenarios) scenarios=$2; shift 2 ;;
    *) passed+=("$1"); shift ;;
  esac
done
if ! grep -q '^<!-- bench-report: begin' "$output" || ! grep -q '^<!-- bench-report: end' "$output"; then
  echo "$output has no bench-report markers" >&2
  exit 1
fi
e2e_args=(--sizes "$sizes" --requests "$requests" --concurrency "$concurrency" --rounds "$rounds"
          --scenarios "$scenarios")

work=target/bench-report
mkdir -p "$work"
if [ "$reuse" = yes ]; then
  # shellcheck disable=SC1091
  . "$work/run.sh"
else
  commit=$(git rev-parse --short=7 HEAD)
  git diff --quiet HEAD -- src crates benches Cargo.toml Cargo.lock || commit="$commit with local changes"
  cpu=$(lscpu | sed -n 's/^Model name: *//p')
  started=$(date -u '+%Y-%m-%d %H:%M UTC')
  e2e_line="${e2e_args[*]} ${passed[*]}"

  echo "== 1/3 the WebAssembly builds" >&2
  component=$(scripts/build-component.sh | sed -n 's/^target\/wasmfn\/function-artifactory.wasm: \([0-9]*\) bytes, \([0-9]*\) gzipped$/\1 \2/p')
  npm=$(scripts/build-wasm.sh | sed -n 's/^pkg\/function_artifactory_bg.wasm: \([0-9]*\) bytes, \([0-9]*\) gzipped$/\1 \2/p')
  if [ -z "$component" ] || [ -z "$npm" ]; then
    echo "a WebAssembly build printed no size" >&2
    exit 1
  fi

  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "== 2/3 end to end: scripts/bench-e2e.sh ${e2e_args[*]} ${passed[*]}" >&2
  scripts/bench-e2e.sh "${e2e_args[@]}" "${passed[@]}" | tee "$work/e2e.txt"
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)

  echo "== 3/3 instructions per call: callgrind of profile-call" >&2
  install_debian "the instruction counts" "${DEBIAN_PROFILE[@]}" || { echo "bench-report needs valgrind" >&2; exit 1; }
  cargo build --quiet --profile profiling --features server --example profile-call >&2
  # Instructions of N calls of a body, the catalog's parse and the process's start included: the
  # difference between 11 calls and 1 is ten calls. Unkeyed hashes, so that the count is the same
  # from run to run (benches/e2e/profile.rs).
  instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      target/profiling/examples/profile-call --unkeyed "$1" "$2" 2>&1 >/dev/null \
      | sed -n 's/.*Collected : *//p'
  }
  : >"$work/callgrind.txt"
  for scenario in plain live; do
    for n in 10 100; do
      body=target/bench-e2e/$scenario-$n-0.bin
      if [ -f "$body" ]; then
        one=$(instructions "$body" 1)
        eleven=$(instructions "$body" 11)
        echo "$scenario $n $(((eleven - one) / 10))" >>"$work/callgrind.txt"
      fi
    done
  done
  cat "$work/callgrind.txt" >&2

  declare -p commit cpu load_before load_after started e2e_line component npm >"$work/run.sh"
fi

# The block: the header the test reads, then the tables, from the e2e table's rows
# (| repos | scenario | server | correct | cold start ms | CPU us/call | kernel % | req/s | p50 ms |
# p99 ms | peak RSS MB |).
block=$work/block.md
awk -v commit="$commit" -v started="$started" -v cpu="$cpu" -v nproc="$(nproc)" \
    -v load_before="$load_before" -v load_after="$load_after" -v e2e="${e2e_line% }" \
    -v component="$component" -v npm="$npm" -v callgrind="$work/callgrind.txt" \
    -v e2e_file="$work/e2e.txt" -v headline="$work/headline.md" '
function trim(s) { gsub(/^ +| +$/, "", s); return s }
function cell(n, scenario, server,   key) {
  key = n SUBSEP scenario SUBSEP server
  # The peers take plain requests only (bench-e2e runs them for no other scenario).
  if (scenario != "plain" && (server == "ts" || server == "python")) return "not run (plain only)"
  if (!(key in cpu_of)) return "-"
  return sprintf("%s us, %s ms, %s MB", cpu_of[key], p99_of[key], rss_of[key])
}
function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2fx", a / b) }
function thousands(x,   s) {
  s = sprintf("%d", x)
  while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s)
  return s
}
function counted(scenario, n) { return ((scenario, n) in count) ? thousands(count[scenario, n]) : "-" }
function goal(bytes) { return bytes < 1500000 ? "met" : "NOT met" }
FILENAME == e2e_file && /^\| [0-9]+ \| / {
  split($0, f, "|")
  n = trim(f[2]); scenario = trim(f[3]); server = trim(f[4])
  if (trim(f[5]) != "yes") next
  key = n SUBSEP scenario SUBSEP server
  cpu_of[key] = trim(f[7]); p99_of[key] = trim(f[11]); rss_of[key] = trim(f[12])
  cold = trim(f[6]) + 0
  if (server == "ours" && cold > cold_max) cold_max = cold
  if (server == "ts" && cold > cold_ts) cold_ts = cold
  if (server == "python" && cold > cold_py) cold_py = cold
  next
}
FILENAME == e2e_file && /^Goals/ { in_goals = 1; next }
FILENAME == e2e_file && in_goals && /^- / { goals[++goal_count] = $0; next }
FILENAME == callgrind { count[$1, $2] = $3; next }
END {
  print "Written by `scripts/bench-report.sh` at " commit ", " started "; " cpu ", " nproc " CPUs;"
  print "load average " load_before " before the end-to-end run and " load_after " after (a shared"
  print "machine: other builds ran beside it). `scripts/bench-e2e.sh " e2e "`, the packaged build"
  print "(static musl); each cell is CPU per call, p99 latency and peak RSS, medians of the rounds."
  print ""
  print "| repos | live schemas | ours | ours, rendering every call | reply floor (same bytes) | TypeScript SDK | Python SDK |"
  print "|---|---|---|---|---|---|---|"
  for (s = 1; s <= 2; s++) {
    scenario = s == 1 ? "plain" : "live"
    for (i = 1; i <= 2; i++) {
      n = i == 1 ? 10 : 100
      printf "| %d | %s | %s | %s | %s | %s | %s |\n", n, s == 1 ? "no" : "yes",
        cell(n, scenario, "ours"), cell(n, scenario, "ours-computed"),
        cell(n, scenario, "floor-reply"), cell(n, scenario, "ts"), cell(n, scenario, "python")
    }
  }
  print ""
  printf "CPU per call against the reply floor: ours %s / %s (10 / 100 repos), rendering every call %s / %s; with live schemas %s / %s and %s / %s. TypeScript / ours: %s / %s.\n",
    ratio(cpu_of[10, "plain", "ours"], cpu_of[10, "plain", "floor-reply"]),
    ratio(cpu_of[100, "plain", "ours"], cpu_of[100, "plain", "floor-reply"]),
    ratio(cpu_of[10, "plain", "ours-computed"], cpu_of[10, "plain", "floor-reply"]),
    ratio(cpu_of[100, "plain", "ours-computed"], cpu_of[100, "plain", "floor-reply"]),
    ratio(cpu_of[10, "live", "ours"], cpu_of[10, "live", "floor-reply"]),
    ratio(cpu_of[100, "live", "ours"], cpu_of[100, "live", "floor-reply"]),
    ratio(cpu_of[10, "live", "ours-computed"], cpu_of[10, "live", "floor-reply"]),
    ratio(cpu_of[100, "live", "ours-computed"], cpu_of[100, "live", "floor-reply"]),
    ratio(cpu_of[10, "plain", "ts"], cpu_of[10, "plain", "ours"]),
    ratio(cpu_of[100, "plain", "ts"], cpu_of[100, "plain", "ours"])
  printf "Cold start (spawn to the first good answer), at most: ours %.1f ms, TypeScript %.1f ms, Python %.1f ms.\n",
    cold_max, cold_ts, cold_py
  print ""
  print "| measure | 10 repos | 100 repos |"
  print "|---|---|---|"
  printf "| instructions per call, plain (callgrind) | %s | %s |\n",
    counted("plain", 10), counted("plain", 100)
  printf "| instructions per call, live schemas (callgrind) | %s | %s |\n",
    counted("live", 10), counted("live", 100)
  split(component, c, " "); split(npm, m, " ")
  print ""
  print "| WebAssembly build | bytes | gzipped | 1,500,000 bytes at most |"
  print "|---|---|---|---|"
  printf "| component (`scripts/build-component.sh`) | %s | %s | %s |\n", thousands(c[1]), thousands(c[2]), goal(c[1])
  printf "| npm module (`scripts/build-wasm.sh`) | %s | %s | %s |\n", thousands(m[1]), thousands(m[2]), goal(m[1])
  print ""
  print "Goals, as `bench-e2e` checked them in this run:"
  print ""
  for (i = 1; i <= goal_count; i++) print goals[i]
  # The headline of the README.
  printf "Measured: a call of 100 repositories takes %s us of server CPU rendered (%s us answered from memory), the TypeScript SDK %s us, Python %s us; %s MB resident ([BENCHMARKS.md](BENCHMARKS.md), %s).\n",
    cpu_of[100, "plain", "ours-computed"], cpu_of[100, "plain", "ours"], cpu_of[100, "plain", "ts"],
    cpu_of[100, "plain", "python"], rss_of[100, "plain", "ours"], commit > headline
}' "$work/e2e.txt" "$work/callgrind.txt" >"$block"

# The block between the markers, the rest of the file as it was.
awk -v block="$block" '
/^<!-- bench-report: begin/ { print; while ((getline line < block) > 0) print line; skipping = 1; next }
/^<!-- bench-report: end/ { skipping = 0 }
!skipping { print }' "$output" >"$work/output.md"
cp "$work/output.md" "$output"
# The README's headline: the line after its marker, when the report is BENCHMARKS.md's.
if [ "$output" = BENCHMARKS.md ]; then
  awk -v headline="$work/headline.md" '
  skip { skip = 0; next }
  /^<!-- bench-report: headline/ { print; while ((getline line < headline) > 0) print line; skip = 1; next }
  { print }' README.md >"$work/README.md"
  cp "$work/README.md" README.md
fi
echo "== $output: the figures between the bench-report markers rewritten" >&2
