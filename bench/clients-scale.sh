#!/usr/bin/env bash
# Client CPU per operation from few to many clients, and the rate-limited writers next to
# closed-loop query threads (issue 11).
#
# 1. null target, step qr100 (per client: an inserter and a deleter at 100 rows/s and a
#    closed-loop range-query thread) at each client count in CLIENTS, with the query threads at
#    nice +10 (the default, --query-nice 10) and at the writers' priority (--query-nice 0),
#    alternating, REPEATS times: client CPU per query (cpupq), queries/s, the writers'
#    achieved rate (% of target), the inserts' schedule lag p99 and the client's RSS.
# 2. PostgreSQL (a throwaway server, max_connections raised): l.i0, 2000 rows per client at
#    10 rows/commit, at each count in PG_CLIENTS: client CPU per inserted row.
# Prints one line per run; the report takes medians by hand (figures in README).
#
# Usage: bench/clients-scale.sh [SECONDS] [REPEATS]   (env CLIENTS, PG_CLIENTS to change counts)
set -euo pipefail
SECS=${1:-5}
REPEATS=${2:-2}
CLIENTS=${CLIENTS:-"8 64 256 512 1024"}
PG_CLIENTS=${PG_CLIENTS:-"8 512"}
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin ixbench
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/ixbench
TMP=$(mktemp -d /tmp/ixbench-bench.XXXXXX)
chmod 755 "$TMP"
cleanup() {
  [ -d "$TMP/pg" ] && "$BIN" server stop "$TMP/pg" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT

figures() { # label run.json
  python3 - "$1" "$2" <<'PY'
import json, sys
label, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
for s in r["steps"]:
    m = s["summary"]
    lag = next((l["lag"]["p99_us"] for l in s["latency"] if l["op"] == "insert" and l.get("lag")), None)
    rate = s.get("achieved_rate"); tgt = s.get("target_rate")
    pct = f'{100*rate/tgt:5.1f}%' if rate and tgt else '    -'
    print(f'{label:28} {s["name"]:6} cpu {m["cpupq"]:8.3f} us/op  qps {m["qps"]:11.0f}  ips {m["ips"]:9.0f}  writers {pct}  lag_p99 {lag if lag is not None else "-":>8} us  rss {m["client_rss_mb"]:6.0f} MB  {s["status"]}')
PY
}

echo "== null target, qr100, ${SECS} s"
for rep in $(seq "$REPEATS"); do
  for n in $CLIENTS; do
    for nice in 10 0; do
      out="$TMP/null-$n-$nice-$rep"
      "$BIN" run --target null --steps qr100 --clients "$n" --query-seconds "$SECS" \
        --query-nice "$nice" --out "$out" >/dev/null
      figures "null clients=$n nice=$nice" "$out/run.json"
    done
  done
done

echo "== PostgreSQL, l.i0, 2000 rows/client, 10 rows/commit"
maxc=0
for n in $PG_CLIENTS; do [ "$n" -gt "$maxc" ] && maxc=$n; done
"$BIN" server start postgres --datadir "$TMP/pg" --set max_connections=$((maxc + 20)) \
  --set shared_buffers=256MB >"$TMP/pg.log"
URL=$(grep -o 'postgres://[^ ]*' "$TMP/pg.log" | head -1)
for rep in $(seq "$REPEATS"); do
  for n in $PG_CLIENTS; do
    out="$TMP/pg-$n-$rep"
    "$BIN" run --target "$URL" --steps l.i0 --clients "$n" --rows 2000 --rows-per-commit 10 \
      --secondary-indexes 0 --out "$out" >/dev/null
    figures "postgres clients=$n" "$out/run.json"
  done
done
