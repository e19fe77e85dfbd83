#!/usr/bin/env bash
# Client instructions per inserted row in l.i0 (100 rows/commit), counted by callgrind: the
# inclusive instruction count of the inserter thread's body divided by the rows. Unlike CPU
# seconds it does not move with the machine's load, so two builds can be compared on a busy
# machine (a change of a few percent is visible). One throwaway PostgreSQL and one MariaDB
# server (InnoDB and, when its plugin is installed, MyRocks), SQLite and the null target.
#
# Usage: bench/client-instructions.sh BIN [BIN2] [ROWS]   (e.g. an old build and a new one)
set -uo pipefail
A=${1:?usage: bench/client-instructions.sh BIN [BIN2] [ROWS]}
B=${2:-}
ROWS=${3:-20000}
command -v valgrind >/dev/null || { echo "needs valgrind (callgrind)"; exit 1; }
TMP=$(mktemp -d /tmp/ixbench-instr.XXXXXX); chmod 755 "$TMP"
cleanup() { for d in "$TMP"/pg "$TMP"/maria; do [ -d "$d" ] && "$A" server stop "$d" >/dev/null 2>&1; done; rm -rf "$TMP"; }
trap cleanup EXIT
"$A" server start postgres --datadir "$TMP/pg" > "$TMP/pg.start" || exit 1
"$A" server start mariadb --datadir "$TMP/maria" > "$TMP/maria.start" || exit 1
PG=$(grep -o 'postgres://[^ ]*' "$TMP/pg.start" | head -1)
MA=$(grep -o 'mysql://[^ ]*' "$TMP/maria.start" | head -1)
n=0
for target in pg innodb rocksdb sqlite null; do
  for bin in $A $B; do
    n=$((n + 1))
    case $target in
      pg) T=$PG; E=() ;;
      innodb) T=$MA; E=(--engine innodb) ;;
      rocksdb) T=$MA; E=(--engine rocksdb) ;;
      sqlite) T="sqlite:$TMP/$n.db"; E=() ;;
      null) T=null; E=() ;;
    esac
    if ! valgrind --tool=callgrind --callgrind-out-file="$TMP/cg$n" "$bin" run --target "$T" "${E[@]}" \
        --out "$TMP/r$n" --table-prefix "i$n" --steps l.i0 --rows "$ROWS" > "$TMP/log" 2>&1; then
      echo "$target $bin: $(tail -1 "$TMP/log")"; continue
    fi
    # The inserter's thread: the largest body a spawned thread runs (the boxed closure std
    # calls, `FnOnce::call_once{{vtable.shim}}'2` in the binary), whatever file the compiler
    # attributes the inlined loop to (src/step/load.rs until 0bd860e, the workload's since):
    # with one client it is the inserter, connect included. If the symbol moves, the figure is
    # unknown.
    ir=$(callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$TMP/cg$n" 2>/dev/null \
      | grep -F "library/core/src/ops/function.rs:core::ops::function::FnOnce::call_once{{vtable.shim}}'2 [" \
      | head -1 | awk '{gsub(",","",$1); print $1}')
    if [ -z "$ir" ]; then echo "$target $bin: unknown instructions/row (no thread body in the profile)"; continue; fi
    echo "$target $bin: $(( ir / ROWS )) instructions/row in the inserter"
  done
done
