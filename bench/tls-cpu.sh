#!/usr/bin/env bash
# What TLS costs ixbench's own clients, in clear versus over TLS on the same throwaway servers
# (one PostgreSQL, one MariaDB InnoDB, both offering TLS with certificates made here by
# `openssl`; connections with sslmode=disable|require, ssl-mode=DISABLED|REQUIRED):
#
# - l.i0 (100 rows/commit): client instructions per inserted row, counted by callgrind in the
#   inserter thread (as bench/client-instructions.sh: not moved by the machine's load);
# - oltp_read_write, 1 thread: client instructions per transaction (callgrind, the client
#   thread), and client CPU (user + system, getrusage via /usr/bin/time) per transaction,
#   RUNS alternating runs of SECONDS each, medians (moved by load, and /usr/bin/time counts in
#   10 ms ticks: a short run's user CPU is a few ticks). RUNS=0 skips these timed runs (on a
#   busy machine only the instruction and system-call counts mean something);
# - system calls of the whole ixbench process (strace -f -c, when strace is installed) per
#   inserted row in l.i0 and per oltp_read_write transaction: all, and the socket's.
#
# The TLS handshake happens once per connection (in a connect thread), so these are the
# per-row and per-transaction costs of encrypting and decrypting the traffic.
#
# - l.i0's client CPU per row (run.json's cpupq, getrusage: moved by load) of one plain run.
#
# Usage: bench/tls-cpu.sh [SECONDS] [ROWS] [RUNS]   (defaults 10 s, 20000 rows, 3 runs)
#   CLIENTS=N: l.i0 with N clients of ROWS rows each (default 1; figures per row of all).
#   LI0_ONLY=1: only l.i0's timed client CPU per row, clear and TLS alternating, RUNS each.
set -euo pipefail
SECS=${1:-10}
ROWS=${2:-20000}
RUNS=${3:-3}
CLIENTS=${CLIENTS:-1}
ALL=$((ROWS * CLIENTS))
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "needs valgrind (callgrind)"; exit 1; }
# BIN=/path/to/ixbench measures that build (nothing built); by default this checkout's release build.
[ -n "${BIN:-}" ] || cargo build --release --quiet --bin ixbench
BIN=${BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/ixbench}
TMP=$(mktemp -d /tmp/ixbench-tlscpu.XXXXXX)
chmod 755 "$TMP"
cleanup() {
  for d in "$TMP"/pg "$TMP"/maria; do [ -d "$d" ] && "$BIN" server stop "$d" >/dev/null 2>&1 || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

# A CA and a server certificate for 127.0.0.1 and localhost (P-256 keys).
. bench/certs.sh
C=$TMP/certs; make_certs "$C" server
# PostgreSQL wants its key private to the user it runs as (postgres, when run as root).
cp "$C/server.key" "$C/pg.key"; chmod 600 "$C/pg.key"
[ "$(id -u)" = 0 ] && chown postgres "$C/pg.key"

"$BIN" server start postgres --datadir "$TMP/pg" --set ssl=on \
  --set "ssl_cert_file=$C/server.crt" --set "ssl_key_file=$C/pg.key" > "$TMP/pg.start"
"$BIN" server start mariadb --datadir "$TMP/maria" --set "ssl_cert=$C/server.crt" \
  --set "ssl_key=$C/server.key" > "$TMP/maria.start"
PG=$(grep -o 'postgres://[^ ]*' "$TMP/pg.start" | head -1)
MA=$(grep -o 'mysql://[^ ]*' "$TMP/maria.start" | head -1)

echo "ixbench $("$BIN" --version | awk '{print $2}'), host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
median() { python3 -c "import sys,statistics; print(f'{statistics.median(map(float,sys.argv[1:])):.1f}')" "$@"; }
per_txn() { python3 -c "import sys; u,s,n=map(float,sys.argv[1:]); print(f'{(u+s)*1e6/n:.1f}')" "$@"; }
# The system calls counted by `strace -f -c` (file $1) per unit ($2): all of them, the
# socket's (std's TcpStream reads with recv and writes with send: recvfrom, sendto), and the
# three most frequent others (most are the samplers reading /proc once per interval, so they
# grow with the run's length under strace, not with the rows).
syscalls() {
  python3 - "$1" "$2" <<'PY'
import sys
rows = float(sys.argv[2]); calls = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 5 and f[0].replace('.', '').isdigit() and f[-1] != 'total':
        calls[f[-1]] = int(f[3])
total = sum(calls.values()); sock = calls.get('recvfrom', 0) + calls.get('sendto', 0)
rest = sorted(((v, k) for k, v in calls.items() if k not in ('recvfrom', 'sendto')), reverse=True)[:3]
print(f"{total/rows:.3f} in all, socket {sock/rows:.3f} (recvfrom {calls.get('recvfrom',0)/rows:.3f}, "
      f"sendto {calls.get('sendto',0)/rows:.3f}); " + ", ".join(f"{k} {v/rows:.3f}" for v, k in rest))
PY
}
# From callgrind file $1, per unit ($2 of them): the instructions inside the TLS stream's read
# and write (rustls's Stream/StreamOwned before 2026-11, netio::TlsStream since), of which the
# cipher's (ring's AEAD open and seal), and the handshakes' (start_tls, once per connection),
# in the whole process. A function's own entry (the one naming its binary) is all of it.
tlsio() {
  callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$1" 2>/dev/null | python3 -c '
import re, sys
n = int(sys.argv[1]); hs = io = aead = 0
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+\S*?:(.*)", line)
    if not m: continue
    ir = int(m.group(1).replace(",", "")); fn = m.group(2)
    if re.match(r"ixbench::dbms::netio::start_tls \[", fn): hs += ir
    if re.match(r"<(rustls::stream::Stream(Owned)?<.*>|ixbench::dbms::netio::TlsStream) as std::io::(Read|Write)>::(read|write) \[", fn): io += ir
    if re.match(r"ring::aead::(aes_gcm|chacha20_poly1305)::(open|seal) \[", fn): aead += ir
print(f"{sys.argv[2]}: {io/n:.0f} instructions/{sys.argv[3]} in the TLS stream read/write, {aead/n:.0f} of them "
      f"in the cipher; {hs/1e6:.1f} M in TLS handshakes (whole process)")
' "$2" "$3" "$4"
}
n=0

# The URL of target $1 (pg, innodb) in clear or over TLS ($2: clear, tls).
url_of() {
  case $1/$2 in
    pg/clear) echo "$PG?sslmode=disable" ;;
    pg/tls) echo "$PG?sslmode=require" ;;
    innodb/clear) echo "$MA?ssl-mode=DISABLED" ;;
    innodb/tls) echo "$MA?ssl-mode=REQUIRED" ;;
  esac
}
cpupq_ns() { python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['steps'][0]['summary']; print(s['cpupq']*1000)" "$1/run.json"; }

if [ "${LI0_ONLY:-0}" = 1 ]; then
  # Only l.i0's client CPU per row (run.json's cpupq, the whole process over the step), clear
  # and TLS alternating, RUNS runs each: with many ROWS, the steady state (a run's TLS
  # handshakes and its per-step work are fixed costs, spread over its rows).
  for target in pg innodb; do
    lc=(); lt=()
    for i in $(seq 1 "$RUNS"); do
      for tls in clear tls; do
        n=$((n + 1))
        "$BIN" run --target "$(url_of $target $tls)" --clients "$CLIENTS" --out "$TMP/r$n" --table-prefix "t$n" \
          --steps l.i0 --rows "$ROWS" > "$TMP/log" 2>&1 || { echo "$target $tls: $(tail -1 "$TMP/log")"; exit 1; }
        if [ $tls = clear ]; then lc+=("$(cpupq_ns "$TMP/r$n")"); else lt+=("$(cpupq_ns "$TMP/r$n")"); fi
      done
    done
    mc=$(median "${lc[@]}"); mt=$(median "${lt[@]}")
    echo "$target l.i0 ($CLIENTS clients x $ROWS rows) median client CPU per row: clear $mc ns, TLS $mt ns, TLS adds $(python3 -c "print(f'{$mt-$mc:.1f}')") ns (clear: ${lc[*]}; TLS: ${lt[*]})"
  done
  exit 0
fi

for target in pg innodb; do
  for tls in clear tls; do
    U=$(url_of $target $tls)
    n=$((n + 1))
    valgrind --tool=callgrind --callgrind-out-file="$TMP/cg$n" "$BIN" run --target "$U" --clients "$CLIENTS" \
      --out "$TMP/r$n" --table-prefix "t$n" --steps l.i0 --rows "$ROWS" > "$TMP/log" 2>&1 \
      || { echo "$target $tls: $(tail -1 "$TMP/log")"; continue; }
    ir=$(callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$TMP/cg$n" 2>/dev/null \
      | grep -E "src/(step|workload/iibench/steps)/load.rs:core::ops::function::FnOnce::call_once" | head -1 | awk '{gsub(",","",$1); print $1}')
    t=$(python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['target'].get('transport') or {}; print(t.get('tls'), t.get('tls_version'), t.get('tls_cipher'))" "$TMP/r$n/run.json")
    if [ -n "$ir" ]; then
      echo "$target $tls l.i0: $(( ir / ALL )) instructions/row in the inserter (transport: $t)"
    else
      echo "$target $tls l.i0: unknown instructions/row (no load.rs closure in the profile)"
    fi
    # The inserter closure above does not hold the socket I/O of every build: see tlsio.
    [ "$tls" = clear ] || tlsio "$TMP/cg$n" "$ALL" "$target $tls l.i0" row
    # Client CPU per row (run.json's cpupq: getrusage of the whole process over the step), the
    # median of RUNS runs (at least one).
    cps=()
    for i in $(seq 1 "$(( RUNS > 0 ? RUNS : 1 ))"); do
      n=$((n + 1))
      "$BIN" run --target "$U" --clients "$CLIENTS" --out "$TMP/r$n" --table-prefix "t$n" --steps l.i0 \
        --rows "$ROWS" > "$TMP/log" 2>&1 || { echo "$target $tls: $(tail -1 "$TMP/log")"; continue 2; }
      cps+=("$(cpupq_ns "$TMP/r$n")")
    done
    echo "$target $tls l.i0 client CPU per row: $(median "${cps[@]}" | cut -d. -f1) ns (median of ${#cps[@]}: ${cps[*]})"
    if command -v strace >/dev/null; then
      n=$((n + 1))
      strace -f -c -o "$TMP/st$n" "$BIN" run --target "$U" --clients "$CLIENTS" --out "$TMP/r$n" --table-prefix "t$n" \
        --steps l.i0 --rows "$ROWS" > "$TMP/log" 2>&1 || { echo "$target $tls strace: $(tail -1 "$TMP/log")"; continue; }
      echo "$target $tls l.i0 system calls per row, whole process: $(syscalls "$TMP/st$n" "$ALL")"
    fi
  done
  # oltp: load once, then alternate clear and TLS runs.
  case $target in pg) B=$PG; q=sslmode; c=disable; s=require ;; innodb) B=$MA; q=ssl-mode; c=DISABLED; s=REQUIRED ;; esac
  "$BIN" oltp --target "$B?$q=$c" --out "$TMP/load-$target" --workload oltp_read_write --tables 4 --table-size 10000 \
    --threads 1 --time 1 > /dev/null
  # Instructions per transaction of the client thread, under callgrind (one run each).
  for mode in $c $s; do
    n=$((n + 1))
    valgrind --tool=callgrind --callgrind-out-file="$TMP/cg$n" "$BIN" oltp --target "$B?$q=$mode" \
      --out "$TMP/v$n" --workload oltp_read_write --tables 4 --table-size 10000 --threads 1 \
      --time "$SECS" --reuse --interval 10 > "$TMP/log" 2>&1 || { echo "$target $mode: $(tail -1 "$TMP/log")"; continue; }
    ir=$(callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$TMP/cg$n" 2>/dev/null \
      | grep "WorkloadClient>::run" | head -1 | awk '{gsub(",","",$1); print $1}')
    txns=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['oltp'][0]['totals']['txns'])" "$TMP/v$n/run.json")
    echo "$target oltp $q=$mode: $(( ${ir:-0} / txns )) instructions/transaction in the client thread ($txns transactions)"
    [ "$mode" = "$c" ] || tlsio "$TMP/cg$n" "$txns" "$target oltp $q=$mode" transaction
    if command -v strace >/dev/null; then
      n=$((n + 1))
      strace -f -c -o "$TMP/st$n" "$BIN" oltp --target "$B?$q=$mode" --out "$TMP/v$n" --workload oltp_read_write \
        --tables 4 --table-size 10000 --threads 1 --time "$SECS" --reuse --interval 10 > "$TMP/log" 2>&1 \
        || { echo "$target $mode strace: $(tail -1 "$TMP/log")"; continue; }
      txns=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['oltp'][0]['totals']['txns'])" "$TMP/v$n/run.json")
      echo "$target oltp $q=$mode system calls per transaction, whole process: $(syscalls "$TMP/st$n" "$txns")"
    fi
  done
  [ "$RUNS" -gt 0 ] || continue
  declare -a vc=() vt=() uc=() ut=()
  for i in $(seq 1 "$RUNS"); do
    for mode in $c $s; do
      out=$( { /usr/bin/time -f "CPU %U %S" "$BIN" oltp --target "$B?$q=$mode" --out "$TMP/o-$target-$mode-$i" --workload oltp_read_write \
        --tables 4 --table-size 10000 --threads 1 --time "$SECS" --reuse --interval 10; } 2>&1 )
      read -r u sy <<< "$(grep '^CPU ' <<< "$out" | awk '{print $2, $3}')"
      txns=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['oltp'][0]['totals']['txns'])" "$TMP/o-$target-$mode-$i/run.json")
      v=$(per_txn "$u" "$sy" "$txns")
      echo "$target oltp $q=$mode run $i: $txns transactions, client CPU ${u}+${sy} s: $v us/txn"
      uv=$(per_txn "$u" 0 "$txns")
      if [ "$mode" = "$c" ]; then vc+=("$v"); uc+=("$uv"); else vt+=("$v"); ut+=("$uv"); fi
    done
  done
  mc=$(median "${vc[@]}"); mt=$(median "${vt[@]}")
  echo "$target oltp median client CPU per transaction: clear $mc us, TLS $mt us, TLS/clear $(python3 -c "print(f'{$mt/$mc:.2f}')")"
  muc=$(median "${uc[@]}"); mut=$(median "${ut[@]}")
  echo "$target oltp median client user CPU per transaction: clear $muc us, TLS $mut us, TLS adds $(python3 -c "print(f'{$mut-$muc:.1f}')") us"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
