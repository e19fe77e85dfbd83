#!/usr/bin/env bash
# Server CPU per operation with --statements prepared vs --statements text (the insert
# benchmark's own client style), side by side on one throwaway PostgreSQL and one MariaDB
# (InnoDB) server.
#
# For each server, REPEATS rounds of: a run with prepared statements, then the same run with
# text statements (alternating, so drift and noise hit both alike). Each run: l.i0 (ROWS rows,
# 100 rows/commit), l.x, l.i1 (ROWS/5 rows, 50 rows/commit, with deletes), qr100 for QSECS s.
# The figures are ixbench's own: server CPU us per operation (srv_cpupq: per inserted row in
# l.i0/l.i1, per range query in qr100, from /proc of the server's processes), client CPU us per
# operation (cpupq), and the rate. Printed: every run, then per step the median of each mode
# and the ratio text / prepared of the medians, and each round's own ratio.
#
# Usage: bench/statements-cpu.sh [ROWS] [REPEATS] [QSECS]
set -euo pipefail
ROWS=${1:-200000}
REPEATS=${2:-3}
QSECS=${3:-10}
cd "$(dirname "$0")/.."
# BIN=/path/to/ixbench measures that build (nothing built); by default this checkout's release build.
[ -n "${BIN:-}" ] || cargo build --release --quiet --bin ixbench
BIN=${BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/ixbench}
TMP=$(mktemp -d /tmp/ixbench-stmts.XXXXXX)
chmod 755 "$TMP"
cleanup() {
  for d in "$TMP"/pg "$TMP"/maria; do [ -d "$d" ] && "$BIN" server stop "$d" >/dev/null 2>&1 || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

for kind in postgres mariadb; do
  dir="$TMP/$([ "$kind" = postgres ] && echo pg || echo maria)"
  "$BIN" server start "$kind" --datadir "$dir" > "$TMP/$kind.start"
  url=$(grep -o '[a-z]*://[^ ]*' "$TMP/$kind.start" | head -1)
  label=$([ "$kind" = postgres ] && echo postgres || echo innodb)
  for r in $(seq 1 "$REPEATS"); do
    for mode in prepared text; do
      "$BIN" run --target "$url" --statements "$mode" --out "$TMP/r-$label-$r-$mode" \
        --table-prefix s --steps l.i0,l.x,l.i1,qr100 --rows "$ROWS" --rows2 $((ROWS / 5)) \
        --query-seconds "$QSECS" > "$TMP/r-$label-$r-$mode.out"
      echo "done $label round $r $mode" >&2
    done
  done
done

python3 - "$TMP" "$REPEATS" <<'PY'
import json, statistics, sys
tmp, k = sys.argv[1], int(sys.argv[2])
def load(label, r, mode):
    j = json.load(open(f"{tmp}/r-{label}-{r}-{mode}/run.json"))
    assert j["config"]["statements"] == mode
    return {s["name"]: s["summary"] for s in j["steps"]}
for label in ["postgres", "innodb"]:
    runs = {m: [load(label, r, m) for r in range(1, k + 1)] for m in ["prepared", "text"]}
    print(f"== {label}")
    for step in ["l.i0", "l.i1", "qr100"]:
        rate = "qps" if step == "qr100" else "ips"
        unit = "query" if step == "qr100" else "row"
        for m in ["prepared", "text"]:
            srv = [x[step].get("srv_cpupq") for x in runs[m]]
            cl = [x[step]["cpupq"] for x in runs[m]]
            rt = [x[step][rate] for x in runs[m]]
            print(f"{step:6} {m:8} server us/{unit}: " + " ".join(f"{v:7.2f}" if v is not None else "unknown" for v in srv)
                  + f"  client us/{unit}: " + " ".join(f"{v:6.2f}" for v in cl)
                  + f"  {rate}: " + " ".join(f"{v:8.0f}" for v in rt))
        med = {m: statistics.median([x[step]["srv_cpupq"] for x in runs[m]]) for m in runs}
        cmed = {m: statistics.median([x[step]["cpupq"] for x in runs[m]]) for m in runs}
        rmed = {m: statistics.median([x[step][rate] for x in runs[m]]) for m in runs}
        per_round = [runs["text"][i][step]["srv_cpupq"] / runs["prepared"][i][step]["srv_cpupq"] for i in range(k)]
        print(f"{step:6} median server us/{unit}: prepared {med['prepared']:.2f}, text {med['text']:.2f}, "
              f"text/prepared {med['text'] / med['prepared']:.2f} (rounds: {', '.join(f'{x:.2f}' for x in per_round)}); "
              f"client text/prepared {cmed['text'] / cmed['prepared']:.2f}; {rate} text/prepared {rmed['text'] / rmed['prepared']:.2f}")
PY
