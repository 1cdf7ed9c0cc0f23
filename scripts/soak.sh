#!/usr/bin/env bash
# Soak test over loopback: CALLS RunFunction calls (default 200000) at CONCURRENCY in flight
# (default 64: 4 HTTP/2 connections of 16 streams each) against the server built here, with h2load.
# Passes when every call succeeded (h2load: HTTP 2xx; the server's debug log: one successful
# RunFunction line per call and no error line, as h2load does not read grpc-status) and the
# server's peak RSS (VmHWM) grew by less than RSS_LIMIT_KB (default 2048) between the end of a
# warm-up at the same concurrency and the end of the run; the server must then exit 0 on
# SIGTERM. Bounded: h2load is stopped after TIME_LIMIT seconds (default 900).
#
# Usage: scripts/soak.sh [CALLS] [CONCURRENCY]
# Environment: PROFILE=release|debug (default release; the test command uses the debug build it
# already has), WARMUP (default: a tenth of CALLS, at least 2000), RSS_LIMIT_KB, TIME_LIMIT,
# VECTOR (default valid-cluster, a request of tests/vectors/), MEMO_MIB (the server's
# --answer-memo-size; default 0: the load repeats one request, which the memo of answers would
# answer from memory after the first call, and the soak is of rendering every call).
set -euo pipefail
cd "$(dirname "$0")/.."

calls="${1:-200000}"
concurrency="${2:-64}"
profile="${PROFILE:-release}"
warmup="${WARMUP:-$(( calls / 10 > 2000 ? calls / 10 : 2000 ))}"
rss_limit_kb="${RSS_LIMIT_KB:-2048}"
time_limit="${TIME_LIMIT:-900}"
vector="${VECTOR:-valid-cluster}"
memo_mib="${MEMO_MIB:-0}"
connections=$(( concurrency >= 16 ? 4 : 1 ))
streams=$(( concurrency / connections ))

# shellcheck source=lib/install.sh
. scripts/lib/install.sh
install_debian "the soak (h2load)" "${DEBIAN_SOAK[@]}" || { echo "soak: h2load missing" >&2; exit 1; }

if [ "$profile" = release ]; then
  cargo build -q --release --bin function-artifactory
  bin=target/release/function-artifactory
else
  # --all-features: the build `cargo test --all-features` already made.
  cargo build -q --all-features --bin function-artifactory
  bin=target/debug/function-artifactory
fi

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill "$server_pid"; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The request as one gRPC message: uncompressed flag, big-endian length, the protobuf bytes.
request="tests/vectors/$vector.request.bin"
length=$(stat -c %s "$request")
{
  printf '\x00'
  printf "\\x$(printf %02x $(( length >> 24 & 255 )))\\x$(printf %02x $(( length >> 16 & 255 )))"
  printf "\\x$(printf %02x $(( length >> 8 & 255 )))\\x$(printf %02x $(( length & 255 )))"
  cat "$request"
} > "$work/body"

"$bin" --insecure --debug --address 127.0.0.1:0 --answer-memo-size "$memo_mib" 2> "$work/server.log" &
server_pid=$!
for _ in $(seq 100); do
  grep -q '"serving"' "$work/server.log" && break
  sleep 0.1
done
address=$(grep -o '"address":"[^"]*"' "$work/server.log" | head -1 | cut -d'"' -f4)
[ -n "$address" ] || { cat "$work/server.log" >&2; echo "soak: the server did not start" >&2; exit 1; }
url="http://$address/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"

rss() { awk -v field="$1:" '$1 == field { print $2 }' "/proc/$server_pid/status"; }

# Runs N calls; fails unless h2load reports every one done, succeeded and 2xx.
load() {
  local n="$1" out="$work/h2load-$2.txt"
  timeout "$time_limit" h2load -n "$n" -c "$connections" -m "$streams" \
    -d "$work/body" -H 'content-type: application/grpc' -H 'te: trailers' "$url" > "$out" || {
      cat "$out" >&2; echo "soak: h2load failed or ran over ${time_limit} s" >&2; exit 1; }
  grep -E '^(finished in|requests:|status codes:)' "$out" | sed "s/^/  $2: /"
  grep -q "requests: $n total, $n started, $n done, $n succeeded, 0 failed, 0 errored, 0 timeout" "$out" &&
    grep -q "status codes: $n 2xx, 0 3xx, 0 4xx, 0 5xx" "$out" ||
    { cat "$out" >&2; echo "soak: failed calls in the $2" >&2; exit 1; }
}

echo "soak: $calls calls at $concurrency in flight ($connections connections x $streams streams), $profile build, request $vector, memo of answers ${memo_mib} MiB"
echo "soak: start: VmRSS $(rss VmRSS) kB"
load "$warmup" warm-up
sleep 1
warm_rss=$(rss VmRSS); warm_hwm=$(rss VmHWM)
echo "soak: after the warm-up of $warmup calls: VmRSS $warm_rss kB, VmHWM $warm_hwm kB, $(rss Threads) threads"
started=$(date +%s)
load "$calls" run
seconds=$(( $(date +%s) - started ))
sleep 1
end_rss=$(rss VmRSS); end_hwm=$(rss VmHWM)
echo "soak: after the run: VmRSS $end_rss kB, VmHWM $end_hwm kB, $(rss Threads) threads"

kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=""
answered=$(grep -c '"message":"RunFunction"' "$work/server.log" || true)
errors=$(grep -c '"level":"ERROR"' "$work/server.log" || true)
hwm_growth=$(( end_hwm - warm_hwm ))
rss_growth=$(( end_rss - warm_rss ))

echo "soak: $calls calls in ${seconds} s; the server answered $answered of $(( warmup + calls )) calls successfully, $errors error lines; exit $status"
echo "soak: growth after the warm-up: VmHWM ${hwm_growth} kB, VmRSS ${rss_growth} kB (limit ${rss_limit_kb} kB)"
failed=0
[ "$answered" -eq $(( warmup + calls )) ] || { echo "soak: FAILED: not every call succeeded in the core" >&2; failed=1; }
[ "$errors" -eq 0 ] || { grep '"level":"ERROR"' "$work/server.log" | head >&2; echo "soak: FAILED: error lines" >&2; failed=1; }
[ "$hwm_growth" -lt "$rss_limit_kb" ] || { echo "soak: FAILED: peak RSS grew ${hwm_growth} kB" >&2; failed=1; }
[ "$rss_growth" -lt "$rss_limit_kb" ] || { echo "soak: FAILED: RSS grew ${rss_growth} kB" >&2; failed=1; }
[ "$status" -eq 0 ] || { echo "soak: FAILED: the server exited $status on SIGTERM" >&2; failed=1; }
[ "$failed" -eq 0 ] && echo "soak: passed"
exit "$failed"
