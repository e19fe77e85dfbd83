#!/usr/bin/env bash
# Client CPU per transaction: ixbench oltp versus sysbench (Debian's sysbench package) on the
# same throwaway server, the same tables, the same threads and time.
#
# For each server (PostgreSQL, MariaDB InnoDB) this starts a throwaway server with
# `ixbench server start`, loads sbtest1..TABLES once with `ixbench oltp` (ixbench's tables,
# which sysbench's `run` uses as they are: same columns, same index), then alternates
# `sysbench WORKLOAD run` and `ixbench oltp --reuse` RUNS times each. Client CPU is user +
# system CPU of the client process as /usr/bin/time reports it (getrusage of the process and
# its threads), divided by the transactions it reports; the medians are printed with the
# ratio ixbench / sysbench (the requirement: at most 0.5).
#
# Usage: bench/sysbench-cpu.sh [SECONDS] [THREADS] [RUNS] [WORKLOAD]
#   defaults: 20 s, 4 threads, 3 runs each, oltp_read_write; TABLES and TABLE_SIZE from the
#   environment (default 4 and 10000). Medians of user and of system CPU are printed apart;
#   STRACE=1 adds one more run of each tool under `strace -f -c` for system calls per
#   transaction; BASE=/path/to/another/ixbench also runs that binary (e.g. an older commit's)
#   in the same alternation, for before/after figures from one run. TLS=1: the throwaway
#   servers take TCP over TLS only (`ixbench server start --server-tls`, certificates made
#   here by openssl), so both tools run over TLS 1.3 (sysbench: PGSSLMODE=require for libpq,
#   --mysql-ssl=on for libmariadb; ixbench: the URL the server printed, verify-full).
set -euo pipefail
SECS=${1:-20}
THREADS=${2:-4}
RUNS=${3:-3}
WORKLOAD=${4:-oltp_read_write}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-10000}
cd "$(dirname "$0")/.."
command -v sysbench >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sysbench; }
# BIN=/path/to/ixbench measures that build (nothing built); by default this checkout's release build.
[ -n "${BIN:-}" ] || cargo build --release --quiet --bin ixbench
BIN=${BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/ixbench}
TMP=$(mktemp -d /tmp/ixbench-sbcpu.XXXXXX)
chmod 755 "$TMP"
cleanup() {
  for d in "$TMP"/pg "$TMP"/maria; do [ -d "$d" ] && "$BIN" server stop "$d" >/dev/null 2>&1 || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
TLSARGS=()
if [ "${TLS:-0}" = 1 ]; then
  . bench/certs.sh
  C=$TMP/certs; make_certs "$C" server client
  # sysbench 1.0's MySQL driver with --mysql-ssl=on loads these three files from its working
  # directory (it always passes a key, a certificate and a CA to mysql_ssl_set).
  cp "$C/client.key" "$TMP/client-key.pem"; cp "$C/client.crt" "$TMP/client-cert.pem"; cp "$C/ca.crt" "$TMP/cacert.pem"
  TLSARGS=(--server-tls "$C")
fi

echo "sysbench $(sysbench --version | awk '{print $2}'), ixbench $("$BIN" --version | awk '{print $2}')"
echo "$WORKLOAD, $TABLES tables x $TABLE_SIZE rows, $THREADS threads, $SECS s per run, $RUNS runs each (alternating)"
echo "host: $(nproc) CPUs, $(awk -F: '/model name/{print $2; exit}' /proc/cpuinfo | sed 's/^ *//')"

# us of client CPU per transaction from /usr/bin/time's "CPU U S" line and a transaction count
per_txn() { python3 -c "import sys; u,s,n=map(float,sys.argv[1:]); print(f'{(u+s)*1e6/n:.1f}')" "$@"; }

# us of user and of system CPU per transaction: "U S" per txn
split_txn() { python3 -c "import sys; u,s,n=map(float,sys.argv[1:]); print(f'{u*1e6/n:.1f} {s*1e6/n:.1f}')" "$@"; }

# "total (name n, ...)" per transaction from an `strace -c` summary and a transaction count
syscalls_per_txn() {
  python3 - "$1" "$2" <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
        calls = int(f[3])
        rows.append((calls, f[-1]))
n = float(sys.argv[2])
rows.sort(reverse=True)
top = ", ".join(f"{name} {c / n:.1f}" for c, name in rows[:4] if c / n >= 0.5)
print(f"{sum(c for c, _ in rows) / n:.1f} ({top})")
PY
}

median() { python3 -c "import sys,statistics; print(f'{statistics.median(map(float,sys.argv[1:])):.1f}')" "$@"; }

bench_one() { # label kind engine
  local label=$1 kind=$2 engine=${3:-} dir url pw port e=() sb sbv=() ixv=() sbu=() sbs=() ixu=() ixs=() us
  local bv=() bu=() bs=()
  dir="$TMP/$([ "$kind" = postgres ] && echo pg || echo maria)"
  local sargs=("${TLSARGS[@]}")
  # sysbench sends its client certificate: MariaDB checks it against ssl_ca (without one it
  # answers "unknown ca").
  if [ "${TLS:-0}" = 1 ] && [ "$kind" != postgres ]; then sargs+=(--set "ssl_ca=$C/ca.crt"); fi
  [ -d "$dir" ] || "$BIN" server start "$kind" --datadir "$dir" "${sargs[@]}" > "$TMP/$kind.start"
  url=$(grep -o '[a-z]*://[^ ]*' "$TMP/$kind.start" | head -1)
  local sbenv=()
  pw=$(cat "$dir/ixbench-password")
  port=${url##*:}; port=${port%%/*}
  [ -n "$engine" ] && e=(--engine "$engine")
  if [ "$kind" = postgres ]; then
    sb=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$port" --pgsql-user=postgres --pgsql-password="$pw" --pgsql-db=ixbench)
    if [ "${TLS:-0}" = 1 ]; then sbenv=(PGSSLMODE=require); fi
  else
    sb=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root --mysql-password="$pw" --mysql-db=ixbench)
    if [ "${TLS:-0}" = 1 ]; then sb+=(--mysql-ssl=on); fi
  fi
  echo "== $label ($url)"
  "$BIN" oltp --target "$url" "${e[@]}" --out "$TMP/load-$label" --workload "$WORKLOAD" \
    --tables "$TABLES" --table-size "$TABLE_SIZE" --threads "$THREADS" --time 1 > /dev/null
  for i in $(seq 1 "$RUNS"); do
    local out u s n
    out=$( { cd "$TMP"; /usr/bin/time -f "CPU %U %S" env "${sbenv[@]}" sysbench "$WORKLOAD" "${sb[@]}" --tables="$TABLES" \
      --table-size="$TABLE_SIZE" --threads="$THREADS" --time="$SECS" --report-interval=0 run; } 2>&1 )
    read -r u s <<< "$(grep '^CPU ' <<< "$out" | awk '{print $2, $3}')"
    n=$(grep -E '^ +transactions:' <<< "$out" | awk '{print $2}')
    sbv+=("$(per_txn "$u" "$s" "$n")")
    read -r us <<< "$(split_txn "$u" "$s" "$n")"; sbu+=("${us% *}"); sbs+=("${us#* }")
    echo "  sysbench run $i: $n transactions ($(grep -E '^ +transactions:' <<< "$out" | grep -o '([0-9.]* per sec.)'), client CPU ${u}+${s} s: ${sbv[-1]} us/txn"
    out=$( { /usr/bin/time -f "CPU %U %S" "$BIN" oltp --target "$url" "${e[@]}" --out "$TMP/r-$label-$i" \
      --workload "$WORKLOAD" --tables "$TABLES" --table-size "$TABLE_SIZE" --threads "$THREADS" \
      --time "$SECS" --reuse --interval 10; } 2>&1 )
    read -r u s <<< "$(grep '^CPU ' <<< "$out" | awk '{print $2, $3}')"
    n=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['oltp'][0]['totals']['txns'])" "$TMP/r-$label-$i/run.json")
    ixv+=("$(per_txn "$u" "$s" "$n")")
    read -r us <<< "$(split_txn "$u" "$s" "$n")"; ixu+=("${us% *}"); ixs+=("${us#* }")
    if [ -n "${BASE:-}" ]; then
      out=$( { /usr/bin/time -f "CPU %U %S" "$BASE" oltp --target "$url" "${e[@]}" --out "$TMP/b-$label-$i" \
        --workload "$WORKLOAD" --tables "$TABLES" --table-size "$TABLE_SIZE" --threads "$THREADS" \
        --time "$SECS" --reuse --interval 10; } 2>&1 )
      local bu_ bs_ bn
      read -r bu_ bs_ <<< "$(grep '^CPU ' <<< "$out" | awk '{print $2, $3}')"
      bn=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['oltp'][0]['totals']['txns'])" "$TMP/b-$label-$i/run.json")
      bv+=("$(per_txn "$bu_" "$bs_" "$bn")")
      read -r us <<< "$(split_txn "$bu_" "$bs_" "$bn")"; bu+=("${us% *}"); bs+=("${us#* }")
      echo "  base     run $i: $bn transactions, client CPU ${bu_}+${bs_} s: ${bv[-1]} us/txn"
    fi
    echo "  ixbench  run $i: $n transactions ($(python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['oltp'][0]['tps'],2))" "$TMP/r-$label-$i/run.json") per sec.), client CPU ${u}+${s} s: ${ixv[-1]} us/txn"
  done
  local ms mi
  ms=$(median "${sbv[@]}")
  mi=$(median "${ixv[@]}")
  echo "  median client CPU per transaction: sysbench $ms us, ixbench $mi us, ratio $(python3 -c "print(f'{$mi/$ms:.2f}')") (requirement <= 0.50)"
  echo "  median user CPU per transaction: sysbench $(median "${sbu[@]}") us, ixbench $(median "${ixu[@]}") us, ratio $(python3 -c "print(f'{$(median "${ixu[@]}")/$(median "${sbu[@]}"):.2f}')")"
  echo "  median system CPU per transaction: sysbench $(median "${sbs[@]}") us, ixbench $(median "${ixs[@]}") us, ratio $(python3 -c "print(f'{$(median "${ixs[@]}")/$(median "${sbs[@]}"):.2f}')")"
  if [ -n "${BASE:-}" ]; then
    echo "  base (BASE) median client CPU per transaction: $(median "${bv[@]}") us (user $(median "${bu[@]}"), system $(median "${bs[@]}"))"
  fi
  if [ "${STRACE:-0}" = 1 ] && command -v strace >/dev/null; then
    # System calls per transaction (one more run of each under strace -f -c; strace slows
    # both, so only the counts are used, not the times).
    local out n calls
    out=$(cd "$TMP"; strace -f -c -o "$TMP/sb.strace" env "${sbenv[@]}" sysbench "$WORKLOAD" "${sb[@]}" --tables="$TABLES" \
      --table-size="$TABLE_SIZE" --threads="$THREADS" --time="$SECS" --report-interval=0 run 2>&1)
    n=$(grep -E '^ +transactions:' <<< "$out" | awk '{print $2}')
    echo "  sysbench syscalls per transaction: $(syscalls_per_txn "$TMP/sb.strace" "$n")"
    strace -f -c -o "$TMP/ix.strace" "$BIN" oltp --target "$url" "${e[@]}" --out "$TMP/s-$label" \
      --workload "$WORKLOAD" --tables "$TABLES" --table-size "$TABLE_SIZE" --threads "$THREADS" \
      --time "$SECS" --reuse --interval 10 > /dev/null 2>&1
    n=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['oltp'][0]['totals']['txns'])" "$TMP/s-$label/run.json")
    echo "  ixbench  syscalls per transaction: $(syscalls_per_txn "$TMP/ix.strace" "$n")"
  fi
}

bench_one postgres postgres
bench_one innodb mariadb innodb
