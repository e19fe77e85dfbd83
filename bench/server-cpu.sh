#!/usr/bin/env bash
# Client CPU per inserted row on real servers, next to sysbench's.
#
# For each server (PostgreSQL, MariaDB InnoDB, MariaDB MyRocks) this starts a throwaway server
# with `ixbench server start`, runs l.i0 (100 rows/commit) and l.i1 with ixbench, then
# `sysbench oltp_insert` (one row per INSERT, autocommit) and, for a like-for-like figure,
# ixbench l.i0 with 1 row per commit. It prints the ixbench process's CPU microseconds per row
# (cpupq), the server's (srv_cpupq, from /proc of its processes), and sysbench's client CPU per
# insert (getrusage of the sysbench process via /usr/bin/time).
#
# Usage: bench/server-cpu.sh [ROWS] [SYSBENCH_SECONDS]
set -euo pipefail
ROWS=${1:-500000}
SECS=${2:-20}
cd "$(dirname "$0")/.."
command -v sysbench >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sysbench; }
cargo build --release --quiet --bin ixbench
BIN=$PWD/target/release/ixbench
TMP=$(mktemp -d /tmp/ixbench-bench.XXXXXX)
chmod 755 "$TMP"
cleanup() {
  for d in "$TMP"/pg "$TMP"/maria; do [ -d "$d" ] && "$BIN" server stop "$d" >/dev/null 2>&1 || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

figures() { # run.json -> "step cpupq srv_cpupq ips" lines
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["steps"]:
    m = s["summary"]
    print(f'{s["name"]:6} client {m["cpupq"]:7.2f} us/row  server {m.get("srv_cpupq") or 0:7.2f} us/row  {m["ips"]:9.0f} rows/s')
PY
}

sysbench_cpu() { # driver args... -> client us per insert
  local out
  out=$( { /usr/bin/time -f "TIME %U %S" sysbench oltp_insert "$@" --tables=1 --table-size=1 --threads=1 --time="$SECS" --report-interval=0 run; } 2>&1 )
  python3 - "$out" <<'PY'
import re, sys
o = sys.argv[1]
u, s = map(float, re.search(r"TIME ([\d.]+) ([\d.]+)", o).groups())
w = int(re.search(r"write:\s+(\d+)", o).group(1))
t = float(re.search(r"total time:\s+([\d.]+)s", o).group(1))
print(f"sysbench oltp_insert: {w} inserts, client CPU {(u + s) * 1e6 / w:.2f} us/insert ({w / t:.0f} inserts/s)")
PY
}

bench_one() { # label kind engine
  local label=$1 kind=$2 engine=${3:-} dir url e=()
  dir="$TMP/$([ "$kind" = postgres ] && echo pg || echo maria)"
  [ -d "$dir" ] || "$BIN" server start "$kind" --datadir "$dir" > "$TMP/$kind.start"
  url=$(grep -o '[a-z]*://[^ ]*' "$TMP/$kind.start" | head -1)
  [ -n "$engine" ] && e=(--engine "$engine")
  echo "== $label ($url)"
  "$BIN" run --target "$url" "${e[@]}" --out "$TMP/r-$label" --table-prefix "b$label" --steps l.i0,l.x,l.i1 --rows "$ROWS" --rows2 $((ROWS / 5)) > /dev/null
  figures "$TMP/r-$label/run.json"
  "$BIN" run --target "$url" "${e[@]}" --out "$TMP/r1-$label" --table-prefix "c$label" --steps l.i0 --rows $((ROWS / 100)) --rows-per-commit 1 > /dev/null
  echo "ixbench l.i0 at 1 row/commit: $(figures "$TMP/r1-$label/run.json" | sed 's/^l.i0 *//')"
  local port=${url##*:}; port=${port%%/*}
  if [ "$kind" = postgres ]; then
    local sb=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$port" --pgsql-user=postgres --pgsql-db=ixbench)
  else
    local sb=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root --mysql-db=ixbench)
    [ -n "$engine" ] && sb+=(--mysql-storage-engine="$engine")
  fi
  sysbench oltp_insert "${sb[@]}" --tables=1 --table-size=1 cleanup >/dev/null 2>&1 || true
  sysbench oltp_insert "${sb[@]}" --tables=1 --table-size=1 prepare >/dev/null
  sysbench_cpu "${sb[@]}"
  sysbench oltp_insert "${sb[@]}" --tables=1 --table-size=1 cleanup >/dev/null
}

bench_one postgres postgres
bench_one innodb mariadb innodb
bench_one myrocks mariadb rocksdb
