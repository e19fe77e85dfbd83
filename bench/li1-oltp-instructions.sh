#!/usr/bin/env bash
# Client instructions per inserted row of l.i1 and per OLTP transaction, counted by callgrind
# for the whole ixbench process (the client; with SQLite, the database engine too, as it runs
# in the process). Instruction counts do not move with the machine's load, so two builds (an
# old commit's and a new one's) can be compared on a busy machine.
#
# Each figure is the difference of two counts, which cancels what both runs share (start-up,
# connecting, creating the table, l.i0's load). The whole-process difference depends on no
# symbol name, but it holds the reporter's and the resource sampler's work, which grows with
# the run's time, not its rows: on a client-server target it is most of it (2026-11-26,
# PostgreSQL: about 8,600 instructions per l.i1 row for the whole process against about 800
# for the inserter and deleter), and it moves with the machine's load (a slower run samples
# more). So l.i1 is also counted in the inserter and deleter threads (their closures in
# src/workload/iibench/steps/load.rs, src/step/load.rs before, as bench/client-instructions.sh does), and oltp in the client function:
# - l.i1: `run --steps l.i0,l.i1` minus `run --steps l.i0` with the same seed and rows, divided
#   by the rows l.i1 inserted (run.json's totals.rows[0]); 50 rows/commit, as many deleted.
#   SQLite, a throwaway PostgreSQL and MariaDB (InnoDB and, when its plugin is installed,
#   MyRocks) started with `BIN server start`.
# - oltp: `oltp --reuse --time LONG` minus `oltp --reuse --time SHORT` (sysbench's
#   oltp_read_write, 1 table of 10,000 rows loaded once, 1 thread), divided by the difference
#   of the transactions run.json counts; the whole process, and the inclusive count of the
#   transaction client's function (`ixbench::step::transactions::client`: connecting,
#   preparing and the loop of one client; the same symbol for every engine). Not the busiest
#   thread: a PostgreSQL log-in's SCRAM (about 57M instructions) runs on the short-lived
#   thread of `dbms::connect_within`, and callgrind counts it in whichever thread reuses its
#   slot, the client's or not depending on timing (docs/measuring.md); the client function's
#   inclusive count holds no other thread's work. PostgreSQL and MariaDB InnoDB; sysbench
#   (when installed) on the same tables, its busiest thread (its worker, which makes its own
#   connection in both runs; the distribution's binary has no symbols to count a function by).
# A figure that cannot be read (a symbol that moved, a run that failed) prints "unknown".
#
# Usage: bench/li1-oltp-instructions.sh BIN [BIN2] [ROWS]   (e.g. an old build and a new one)
#   BIN=/path/to/ixbench instead of the first argument; PARTS="li1 oltp" (the default) or one
#   of them; KEEP=1 keeps the callgrind files (the directory is printed).
# Figures (issue 18's before/after of the one-loop redesign): docs/measuring.md.
set -uo pipefail
A=${1:-${BIN:-}}
[ -n "$A" ] || { echo "usage: bench/li1-oltp-instructions.sh BIN [BIN2] [ROWS] (or BIN=... in the environment)"; exit 2; }
B=${2:-}
ROWS=${3:-20000}
SHORT=${SHORT:-4}
LONG=${LONG:-14}
PARTS=${PARTS:-li1 oltp}
command -v valgrind >/dev/null || { echo "needs valgrind (callgrind)"; exit 1; }
TMP=$(mktemp -d /tmp/ixbench-li1.XXXXXX); chmod 755 "$TMP"
cleanup() {
  for d in "$TMP"/pg "$TMP"/maria; do [ -d "$d" ] && "$A" server stop "$d" >/dev/null 2>&1; done
  if [ -n "${KEEP:-}" ]; then echo "kept: $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
"$A" server start postgres --datadir "$TMP/pg" > "$TMP/pg.start" || exit 1
"$A" server start mariadb --datadir "$TMP/maria" > "$TMP/maria.start" || exit 1
PG=$(grep -o 'postgres://[^ ]*' "$TMP/pg.start" | head -1)
MA=$(grep -o 'mysql://[^ ]*' "$TMP/maria.start" | head -1)

# Instructions of the whole process in a callgrind output file.
total() { grep -E '^(summary|totals):' "$1" | head -1 | awk '{print $2}'; }
# Instructions of the steps' inserter and deleter threads (inclusive, their bodies are
# closures of src/workload/iibench/steps/load.rs (src/step/load.rs before), as in
# bench/client-instructions.sh, summed: the inserter's and the deleter's are two closures, and
# which of them the compiler keeps apart from its caller changes between builds; empty if the
# symbol moved).
workers() {
  local ir
  ir=$(callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$1" 2>/dev/null \
    | grep -E "src/(step|workload/iibench/steps)/load.rs:core::ops::function::FnOnce::call_once" \
    | awk '{gsub(",","",$1); s += $1; n++} END {if (n) print s}')
  echo "$ir"
}
# One field of run.json (empty when it cannot be read).
js() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }
# (A - B) / (C - D), or "unknown" when a count is missing or the divisor is not positive.
per() {
  local n
  for n in "$1" "$2" "$3" "$4"; do [[ $n =~ ^[0-9]+$ ]] || { echo unknown; return; }; done
  [ $(($3 - $4)) -gt 0 ] || { echo unknown; return; }
  echo $(( ($1 - $2) / ($3 - $4) ))
}

n=0
li1_targets=; [[ " $PARTS " == *" li1 "* ]] && li1_targets="sqlite pg innodb rocksdb"
oltp_targets=; [[ " $PARTS " == *" oltp "* ]] && oltp_targets="pg innodb"
for target in $li1_targets; do
  for bin in $A $B; do
    n=$((n + 1))
    case $target in
      pg) T=$PG; E=() ;;
      innodb) T=$MA; E=(--engine innodb) ;;
      rocksdb) T=$MA; E=(--engine rocksdb) ;;
      sqlite) T="sqlite:$TMP/$n.db"; E=() ;;
    esac
    ok=1
    for steps in l.i0 l.i0,l.i1; do
      tag=$n-${steps//[.,]/}
      [ "$target" = sqlite ] && T="sqlite:$TMP/$tag.db"
      if ! valgrind --tool=callgrind --callgrind-out-file="$TMP/cg$tag" "$bin" run --target "$T" "${E[@]}" \
          --out "$TMP/r$tag" --table-prefix "t${tag//-/x}x" --steps "$steps" --rows "$ROWS" \
          --rows2 $((ROWS * 5 / 4)) > "$TMP/log" 2>&1; then
        echo "$target $bin: $(tail -1 "$TMP/log")"; ok=0; break
      fi
    done
    [ $ok = 1 ] || continue
    i0=$(total "$TMP/cg$n-li0"); i1=$(total "$TMP/cg$n-li0li1")
    w0=$(workers "$TMP/cg$n-li0"); w1=$(workers "$TMP/cg$n-li0li1")
    rows=$(js "$TMP/r$n-li0li1/run.json" "[s for s in r['steps'] if s['name']=='l.i1'][0]['totals']['rows'][0]")
    echo "$target $bin: $(per "$w1" "$w0" "$rows" 0) instructions/row in l.i1's inserter and deleter, $(per "$i1" "$i0" "$rows" 0) in the whole process (${rows:-unknown} rows)"
  done
done

# callgrind with threads apart (FILE-01, FILE-02...): the instructions of all threads.
whole() {
  local w=0 x f
  for f in "$1"-[0-9]*; do
    x=$(total "$f"); [[ $x =~ ^[0-9]+$ ]] || return; w=$((w + x))
  done
  echo "$w"
}
# The busiest thread's instructions (sysbench's worker thread; the rest are its start-up).
busiest() {
  local m=0 x f
  for f in "$1"-[0-9]*; do
    x=$(total "$f"); [[ $x =~ ^[0-9]+$ ]] || return; [ "$x" -gt "$m" ] && m=$x
  done
  echo "$m"
}
# The inclusive instructions of ixbench's transaction client function (one client: its
# connection, its prepared statements, its transactions; #[inline(never)] in
# src/step/transactions.rs), summed over the threads' files; empty when no thread has the
# symbol (it moved). callgrind_annotate lists the function once per source file its code
# comes from, largest first: the first is its own (src/step/transactions.rs, with everything
# it calls), the others are a few instructions inlined from elsewhere.
client_fn() {
  local s=0 found= x f
  for f in "$1"-[0-9]*; do
    x=$(callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$f" 2>/dev/null \
      | grep -E ':ixbench::step::transactions::client( |$)' | head -1 | awk '{gsub(",","",$1); print $1}')
    [ -n "$x" ] && { s=$((s + x)); found=1; }
  done
  [ -n "$found" ] && echo "$s"
}

for target in $oltp_targets; do
  case $target in
    pg) T=$PG; E=(); D=pg ;;
    innodb) T=$MA; E=(--engine innodb); D=maria ;;
  esac
  O=(--workload oltp_read_write --tables 1 --table-size 10000 --threads 1)
  "$A" oltp --target "$T" "${E[@]}" "${O[@]}" --out "$TMP/load-$target" --time 1 > "$TMP/log" 2>&1 \
    || { echo "$target: loading failed: $(tail -1 "$TMP/log")"; continue; }
  for bin in $A $B; do
    n=$((n + 1))
    ok=1
    for t in $SHORT $LONG; do
      if ! valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$TMP/cg$n-$t" "$bin" oltp \
          --target "$T" "${E[@]}" "${O[@]}" --reuse --time "$t" --out "$TMP/o$n-$t" > "$TMP/log" 2>&1; then
        echo "$target $bin: $(tail -1 "$TMP/log")"; ok=0; break
      fi
    done
    [ $ok = 1 ] || continue
    txn() { js "$TMP/o$n-$1/run.json" "r['oltp'][0]['totals']['txns']"; }
    s=$(txn "$SHORT"); l=$(txn "$LONG")
    w=$(per "$(whole "$TMP/cg$n-$LONG")" "$(whole "$TMP/cg$n-$SHORT")" "$l" "$s")
    c=$(per "$(client_fn "$TMP/cg$n-$LONG")" "$(client_fn "$TMP/cg$n-$SHORT")" "$l" "$s")
    echo "$target $bin: $c instructions/transaction in oltp_read_write's client function, $w in the whole process (${s:-unknown} and ${l:-unknown} transactions)"
  done
  # sysbench's own client on the same tables, counted the same way (its worker thread is the
  # busiest; LuaJIT runs the transaction's script).
  command -v sysbench > /dev/null || { echo "$target sysbench: not installed"; continue; }
  pw=$(cat "$TMP/$D/ixbench-password"); port=${T##*:}; port=${port%%/*}
  if [ "$target" = pg ]; then
    SB=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$port" --pgsql-user=postgres --pgsql-password="$pw" --pgsql-db=ixbench)
  else
    SB=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root --mysql-password="$pw" --mysql-db=ixbench)
  fi
  n=$((n + 1))
  ok=1
  for t in $SHORT $LONG; do
    if ! valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$TMP/cg$n-$t" sysbench oltp_read_write \
        "${SB[@]}" --tables=1 --table-size=10000 --threads=1 --time="$t" --report-interval=0 run > "$TMP/sb$n-$t" 2>&1; then
      echo "$target sysbench: $(tail -1 "$TMP/sb$n-$t")"; ok=0; break
    fi
  done
  [ $ok = 1 ] || continue
  sbt() { grep -E '^ +transactions:' "$TMP/sb$n-$1" | awk '{print $2}'; }
  s=$(sbt "$SHORT"); l=$(sbt "$LONG")
  w=$(per "$(whole "$TMP/cg$n-$LONG")" "$(whole "$TMP/cg$n-$SHORT")" "$l" "$s")
  c=$(per "$(busiest "$TMP/cg$n-$LONG")" "$(busiest "$TMP/cg$n-$SHORT")" "$l" "$s")
  echo "$target sysbench: $c instructions/transaction in oltp_read_write's worker thread, $w in the whole process (${s:-unknown} and ${l:-unknown} transactions)"
done
