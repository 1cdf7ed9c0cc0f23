#!/usr/bin/env bash
# The instruction-count guard (issue 58): instructions per call of a fixed set of requests,
# counted by callgrind on `profile-call` (benches/e2e/profile.rs: decode, run and encode, no
# transport), compared with the committed baseline benches/instructions-baseline.tsv. Fails when
# a request costs more than the baseline by over TOLERANCE percent (default 5), so a slowdown
# cannot land unseen; says when one costs less by as much, so the baseline can follow a speedup.
#
#   scripts/instructions.sh            # measure and compare (the test command runs this)
#   scripts/instructions.sh --bless    # measure and rewrite the baseline (commit it, say why)
#
# The requests: the benchmark's claim (benches/requests.rs) at 10 and 100 repositories, plain and
# with both provider APIs' live schemas, first seen (the content key read, then the call) and
# remembered (the content key read alone, what a memo hit costs but for the lookup); a settled
# claim's reconcile (two calls whose resources exist, observed as the provider writes them); and
# a claim in each phase of the lifecycle, as the test vectors hold them (tests/vectors/).
# A count is that of 11 calls minus that of 1, over 10: the process's start and the catalog's
# parse fall out. Content hashes are unkeyed so that a count is the same from run to run.
# Counts hold for one toolchain (the rustc the baseline names, the one a new machine has) on
# x86_64: after a toolchain or dependency update, rerun with --bless and say so in the commit.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/install.sh
. scripts/lib/install.sh

bless=no
[ "${1:-}" = --bless ] && bless=yes
tolerance=${TOLERANCE:-5}
baseline=benches/instructions-baseline.tsv
out=target/instructions

install_debian "the instruction counts" "${DEBIAN_PROFILE[@]}" || {
  echo "the instruction-count guard needs valgrind" >&2
  exit 1
}

# The request bodies, written by the benchmark's own generators (dev builds, as the tests build
# them: all features, so nothing is built twice).
mkdir -p "$out"
cargo run --quiet --all-features --example bench-schemas -- "$out" >/dev/null
cargo run --quiet --all-features --example bench-e2e -- --ours none --noop none --out "$out" \
  --sizes 10,100 --scenarios plain,live,steady --write-only >/dev/null
cargo build --quiet --profile profiling --features server --example profile-call

# NAME FLAGS BODY...: instructions per call of the bodies, in turn, with profile-call's flags.
per_call() {
  local name=$1 flags=$2 one eleven
  shift 2
  count() {
    # shellcheck disable=SC2086 # the flags are words
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      target/profiling/examples/profile-call --unkeyed $flags "$@" 2>&1 >/dev/null |
      sed -n 's/.*Collected : *//p'
  }
  one=$(count "$@" 1)
  eleven=$(count "$@" 11)
  if [ -z "$one" ] || [ -z "$eleven" ]; then
    echo "$name: callgrind printed no count" >&2
    exit 1
  fi
  printf '%s\t%s\n' "$name" $(((eleven - one) / 10))
}

measured=$out/measured.tsv
{
  for n in 10 100; do
    for scenario in plain live; do
      per_call "$scenario-$n-first-seen" --key "$out/$scenario-$n-0.bin"
      per_call "$scenario-$n-remembered" --hit "$out/$scenario-$n-0.bin"
    done
  done
  per_call "settled-100-reconcile" --key "$out/steady-100-0.bin" "$out/steady-100-1.bin"
  for vector in adoption-phases adoption-takeover observed-import observed-ready \
    observed-removal-protected observed-removal-released observed-leak unsafe-change key-conflict; do
    per_call "phase-$vector" --key "tests/vectors/$vector.request.bin"
  done
} >"$measured"

if [ "$bless" = yes ]; then
  {
    printf '# Instructions per call (callgrind, profile-call; scripts/instructions.sh --bless).\n'
    printf '# rustc: %s\n' "$(rustc --version)"
    cat "$measured"
  } >"$baseline"
  echo "wrote $baseline:"
  cat "$measured"
  exit 0
fi

rustc_now=$(rustc --version)
rustc_then=$(sed -n 's/^# rustc: //p' "$baseline")
if [ "$rustc_now" != "$rustc_then" ]; then
  echo "note: the baseline was counted with $rustc_then, this is $rustc_now" >&2
fi

# Each request against its baseline: over by more than the tolerance fails.
awk -F'\t' -v tolerance="$tolerance" '
FNR == NR { if ($0 !~ /^#/) base[$1] = $2; next }
{
  seen[$1] = 1
  if (!($1 in base)) { printf "%-36s %12s  no baseline (scripts/instructions.sh --bless)\n", $1, $2; failed = 1; next }
  change = ($2 - base[$1]) * 100 / base[$1]
  verdict = "ok"
  if (change > tolerance) { verdict = "SLOWER than the baseline by over " tolerance "%"; failed = 1 }
  else if (change < -tolerance) verdict = "faster: rewrite the baseline (--bless) so the gain is kept"
  printf "%-36s %12d  baseline %12d  %+6.2f%%  %s\n", $1, $2, base[$1], change, verdict
}
END {
  for (name in base) if (!(name in seen)) { printf "%-36s no longer measured: rewrite the baseline\n", name; failed = 1 }
  exit failed
}' "$baseline" "$measured"
