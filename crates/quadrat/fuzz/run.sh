#!/usr/bin/env bash
# Runs the fuzz targets for a while each, starting from the committed corpus.
#
#   crates/quadrat/fuzz/run.sh SECONDS [TARGET...]
#
# Runs every target of crates/quadrat/fuzz, and of crates/quadrat-lab/fuzz
# when that directory exists, for SECONDS each (one at a time, one process),
# or only the TARGETs named. Each run starts from a temporary copy of
# fuzz/corpus/<target>/, so the repository is left as it was; crashing
# inputs are kept in fuzz/artifacts/<target>/ (ignored by git). Prints
# libFuzzer's final statistics and the operations each target counted, and
# exits non-zero when a target crashes or does not build.
#
# Needs a nightly toolchain (cargo-fuzz builds with -Z flags) and cargo-fuzz,
# which it installs when missing. Without nightly it says so and exits 0.
#
# FUZZ_SANITIZER (default: none) picks cargo-fuzz's sanitizer; quadrat's
# unsafe blocks are a prefetch hint, and SSE comparisons and widenings of
# values in registers, which read and write no memory, so none runs several
# times faster than address.
set -euo pipefail

usage() {
  echo "usage: $0 SECONDS [TARGET...]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
secs=$1
shift
[[ "$secs" =~ ^[0-9]+$ ]] && [ "$secs" -gt 0 ] || usage
wanted=("$@")
sanitizer=${FUZZ_SANITIZER:-none}

root=$(cd "$(dirname "$0")/../../.." && pwd)
dirs=("$root/crates/quadrat/fuzz")
[ -d "$root/crates/quadrat-lab/fuzz" ] && dirs+=("$root/crates/quadrat-lab/fuzz")

# A nightly toolchain, or skip.
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  echo "installing the nightly toolchain (minimal profile)"
  if ! rustup toolchain install nightly --profile minimal; then
    echo "skipping fuzzing: no nightly toolchain"
    exit 0
  fi
fi

# cargo-fuzz.
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi
echo "$(cargo fuzz --version), $(cargo +nightly --version)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

status=0
summary=()
ran=0
for dir in "${dirs[@]}"; do
  cd "$dir"
  name=${dir#"$root"/}
  mapfile -t targets < <(cargo +nightly fuzz list 2>/dev/null)
  run=()
  for t in "${targets[@]}"; do
    if [ ${#wanted[@]} -eq 0 ] || [[ " ${wanted[*]} " == *" $t "* ]]; then
      run+=("$t")
    fi
  done
  [ ${#run[@]} -gt 0 ] || continue

  echo
  echo "== building ${run[*]} ($name, sanitizer $sanitizer)"
  for t in "${run[@]}"; do
    if ! cargo +nightly fuzz build -s "$sanitizer" -a "$t"; then
      echo "FAILED to build $name/$t"
      summary+=("$name/$t: does not build")
      status=1
      continue 2
    fi
  done

  for t in "${run[@]}"; do
    ran=$((ran + 1))
    corpus="$work/corpus-$(basename "$(dirname "$dir")")-$t"
    mkdir -p "$corpus"
    if [ -d "corpus/$t" ]; then
      cp -r "corpus/$t/." "$corpus/"
    fi
    log="$work/$t.log"
    echo
    echo "== $name/$t: ${secs}s from $(find "$corpus" -type f | wc -l) corpus inputs"
    marker="$work/$t.start"
    touch "$marker"
    start=$SECONDS
    rc=0
    # A generous outer limit in case libFuzzer hangs.
    timeout --signal=INT --kill-after=60 $((secs + 600)) \
      cargo +nightly fuzz run -s "$sanitizer" -a "$t" "$corpus" -- \
      -max_total_time="$secs" -print_final_stats=1 -timeout=120 \
      >"$log" 2>&1 || rc=$?
    took=$((SECONDS - start))
    # The statistics, the operations counted and the dictionary's absence
    # keep the output short; the full log is printed on a crash.
    grep -E '^(stat::|Done [0-9]+ runs|[a-z_]+: [0-9]+ operations in)' "$log" || true
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    ops=$(sed -n 's/^[a-z_]*: \([0-9]*\) operations in.*/\1/p' "$log" | tail -n 1)
    if [ "$rc" -ne 0 ]; then
      echo "!! $name/$t exited with $rc"
      # The panic message, then libFuzzer's report, which ends with the
      # command to reproduce and the failing input decoded.
      sed -n '/panicked at/,/stack backtrace/p' "$log" | head -n 20
      sed -n '/ERROR: libFuzzer/,$p' "$log" | tail -n 150
      while read -r a; do
        echo "-- artifact $dir/$a:"
        od -An -tx1 "$a" | head -n 40
      done < <(find "artifacts/$t" -type f -newer "$marker" 2>/dev/null)
      summary+=("$name/$t: CRASH after ${took}s (exit $rc), ${execs:-?} executions")
      status=1
    else
      summary+=("$name/$t: ok, ${took}s, ${execs:-?} executions, ${ops:-?} operations")
    fi
  done
done

echo
echo "== summary"
if [ "$ran" -eq 0 ] && [ ${#summary[@]} -eq 0 ]; then
  echo "no target matched: ${wanted[*]}"
  exit 2
fi
printf '%s\n' "${summary[@]}"
exit "$status"
