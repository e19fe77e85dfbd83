#!/usr/bin/env bash
# l.i0 on SQLite: ixbench versus the simplest possible loop inserting the same rows with one
# prepared multi-row INSERT per commit under the same PRAGMAs (examples/sqlite_baseline.rs).
# Runs both REPEAT times, alternating, on fresh files; prints each rows/s, the medians and
# ixbench / baseline. Goal: ratio >= 0.90. Also measures the null target (client ceiling).
#
# Usage: bench/sqlite-li0.sh [ROWS] [REPEAT]
#   BIN=/path/to/ixbench: that build instead of this checkout's release build (nothing built);
#   BASELINE=/path/to/sqlite_baseline: that build of the example;
#   OTHER=/path/to/another/ixbench: also runs that build (e.g. an older commit's) in the same
#   alternation, for before/after figures from one run (its median and OTHER / ixbench).
set -euo pipefail
ROWS=${1:-1000000}
REPEAT=${2:-5}
cd "$(dirname "$0")/.."
if [ -z "${BIN:-}" ] || [ -z "${BASELINE:-}" ]; then
  cargo build --release --quiet --bin ixbench --example sqlite_baseline
fi
BIN=${BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/ixbench}
BASE=${BASELINE:-${CARGO_TARGET_DIR:-$PWD/target}/release/examples/sqlite_baseline}
OTHER=${OTHER:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ixb_rate() { # rows/s of l.i0 from run.json
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(round(r["steps"][0]["summary"]["ips"]))' "$1/run.json"
}

: > "$TMP/ixb"; : > "$TMP/base"; : > "$TMP/other"
for i in $(seq 1 "$REPEAT"); do
  "$BASE" "$TMP/base$i.db" "$ROWS" 100 >> "$TMP/base"
  "$BIN" run --target "sqlite:$TMP/ixb$i.db" --out "$TMP/r$i" --steps l.i0 --rows "$ROWS" > /dev/null
  ixb_rate "$TMP/r$i" >> "$TMP/ixb"
  if [ -n "$OTHER" ]; then
    "$OTHER" run --target "sqlite:$TMP/oth$i.db" --out "$TMP/o$i" --steps l.i0 --rows "$ROWS" > /dev/null
    ixb_rate "$TMP/o$i" >> "$TMP/other"
  fi
  rm -f "$TMP"/*.db "$TMP"/*.db-wal "$TMP"/*.db-shm
done
B=$(median < "$TMP/base"); X=$(median < "$TMP/ixb")
echo "baseline rows/s: $(tr '\n' ' ' < "$TMP/base")"
echo "ixbench  rows/s: $(tr '\n' ' ' < "$TMP/ixb")"
echo "median baseline=$B ixbench=$X ratio=$(python3 -c "print(f'{$X/$B:.3f}')")"
if [ -n "$OTHER" ]; then
  O=$(median < "$TMP/other")
  echo "other    rows/s: $(tr '\n' ' ' < "$TMP/other")"
  echo "median other=$O other/baseline=$(python3 -c "print(f'{$O/$B:.3f}')") other/ixbench=$(python3 -c "print(f'{$O/$X:.3f}')")"
fi

: > "$TMP/null"; : > "$TMP/onull"
null_fig() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["steps"][0]; print(round(s["summary"]["ips"]), round(s["summary"]["cpupq"]*1000))' "$1/run.json"; }
for i in $(seq 1 "$REPEAT"); do
  "$BIN" run --target null --out "$TMP/n$i" --steps l.i0 --rows $((ROWS * 10)) > /dev/null
  null_fig "$TMP/n$i" >> "$TMP/null"
  if [ -n "$OTHER" ]; then
    "$OTHER" run --target null --out "$TMP/on$i" --steps l.i0 --rows $((ROWS * 10)) > /dev/null
    null_fig "$TMP/on$i" >> "$TMP/onull"
  fi
done
echo "null target rows/s and client CPU ns/row: $(tr '\n' ';' < "$TMP/null")"
echo "null median rows/s: $(cut -d' ' -f1 "$TMP/null" | median), CPU ns/row: $(cut -d' ' -f2 "$TMP/null" | median)  (one inserter thread = one core)"
if [ -n "$OTHER" ]; then
  echo "other null rows/s and client CPU ns/row: $(tr '\n' ';' < "$TMP/onull")"
  echo "other null median rows/s: $(cut -d' ' -f1 "$TMP/onull" | median), CPU ns/row: $(cut -d' ' -f2 "$TMP/onull" | median)"
fi
