#!/usr/bin/env bash
# The client's own cost in one table: ixbench against sysbench and against the bare SQLite loop,
# in clear and over TLS, PostgreSQL and MariaDB InnoDB, for this build and (BASE=) another one.
# It runs the other scripts and gathers their figures:
#
# - bench/tls-cpu.sh (each build; CLIENTS=2 for l.i0): oltp_read_write client instructions per
#   transaction (callgrind, the client thread) in clear and over TLS and their difference (the
#   TLS delta), median client CPU per transaction of RUNS timed runs, system calls per
#   transaction and per l.i0 row (strace -f -c, whole process), l.i0 instructions and client
#   CPU (run.json's cpupq) per row;
# - bench/sysbench-cpu.sh (STRACE=1, BASE= in the same alternation): user CPU per transaction
#   of sysbench and of ixbench on the same tables, and sysbench's system calls per transaction;
# - bench/sqlite-li0.sh (OTHER=BASE): l.i0 on SQLite against the bare rusqlite loop, medians of
#   REPEAT alternating timed runs;
# - callgrind of the whole process for SQLite's l.i0 and the bare loop (SQLROWS rows each).
#
# Instruction and system-call counts do not move with the machine's load; CPU times do (on a
# shared machine they are noise: say so when quoting them).
#
# Usage: bench/client-cost.sh [SECONDS] [ROWS] [RUNS]   (defaults 5 s, 20000 rows per client, 3)
#   BIN=/path/to/ixbench (default: this checkout's release build), BASE=/path/to/older/ixbench
#   (optional: a "before" column), BASELINE=/path/to/sqlite_baseline, SQLROWS (default 200000),
#   REPEAT (default 5). KEEP=1 keeps the scripts' logs (the directory is printed).
set -euo pipefail
SECS=${1:-5}
ROWS=${2:-20000}
RUNS=${3:-3}
SQLROWS=${SQLROWS:-200000}
REPEAT=${REPEAT:-5}
cd "$(dirname "$0")/.."
if [ -z "${BIN:-}" ] || [ -z "${BASELINE:-}" ]; then
  cargo build --release --quiet --bin ixbench --example sqlite_baseline
fi
BIN=${BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/ixbench}
BASELINE=${BASELINE:-${CARGO_TARGET_DIR:-$PWD/target}/release/examples/sqlite_baseline}
BASE=${BASE:-}
command -v valgrind >/dev/null || { echo "needs valgrind (callgrind)"; exit 1; }
L=$(mktemp -d /tmp/ixbench-cost.XXXXXX); chmod 755 "$L"
trap '[ -n "${KEEP:-}" ] && echo "kept: $L" || rm -rf "$L"' EXIT
echo "client cost: $(date -u +%F), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

builds=(now); [ -n "$BASE" ] && builds=(base now)
for b in "${builds[@]}"; do
  bin=$BIN; [ "$b" = base ] && bin=$BASE
  echo "-- bench/tls-cpu.sh ($b: $bin)"
  BIN=$bin CLIENTS=2 bench/tls-cpu.sh "$SECS" "$ROWS" "$RUNS" > "$L/tls-$b" 2>&1 || echo "   failed: $(tail -1 "$L/tls-$b")"
done
echo "-- bench/sysbench-cpu.sh"
BIN=$BIN BASE=$BASE STRACE=1 TABLES=4 TABLE_SIZE=10000 bench/sysbench-cpu.sh "$SECS" 1 "$RUNS" > "$L/sb" 2>&1 \
  || echo "   failed: $(tail -1 "$L/sb")"
echo "-- bench/sysbench-cpu.sh, TLS=1"
TLS=1 BIN=$BIN BASE=$BASE TABLES=4 TABLE_SIZE=10000 bench/sysbench-cpu.sh "$SECS" 1 "$RUNS" > "$L/sbtls" 2>&1 \
  || echo "   failed: $(tail -1 "$L/sbtls")"
echo "-- bench/sqlite-li0.sh"
BIN=$BIN BASELINE=$BASELINE OTHER=$BASE bench/sqlite-li0.sh 1000000 "$REPEAT" > "$L/sq" 2>&1 \
  || echo "   failed: $(tail -1 "$L/sq")"
echo "-- callgrind, SQLite l.i0 and the bare loop ($SQLROWS rows)"
total() { grep -E '^(summary|totals):' "$1" | head -1 | awk '{print $2}'; }
valgrind --tool=callgrind --callgrind-out-file="$L/cg-bare" "$BASELINE" "$L/bare.db" "$SQLROWS" 100 > /dev/null 2>&1
echo "bare $(total "$L/cg-bare")" > "$L/cg"
for b in "${builds[@]}"; do
  bin=$BIN; [ "$b" = base ] && bin=$BASE
  valgrind --tool=callgrind --callgrind-out-file="$L/cg-$b" "$bin" run --target "sqlite:$L/$b.db" \
    --out "$L/r-$b" --steps l.i0 --rows "$SQLROWS" > /dev/null 2>&1
  echo "$b $(total "$L/cg-$b")" >> "$L/cg"
done
rm -f "$L"/*.db*

python3 - "$L" "$SQLROWS" "${builds[@]}" <<'PY'
import re, sys
L, sqlrows, builds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def text(n):
    try: return open(f"{L}/{n}").read()
    except OSError: return ""
def num(pat, s, g=1):
    m = re.search(pat, s, re.M)
    return float(m.group(g).replace(",", "")) if m else None
def f(v, d=0):
    return "unknown" if v is None else f"{v:,.{d}f}"
rows = []
def row(name, vals, d=0):
    rows.append((name, [f(v, d) for v in vals]))
for t, q, c, s in (("pg", "sslmode", "disable", "require"), ("innodb", "ssl-mode", "DISABLED", "REQUIRED")):
    name = "PostgreSQL" if t == "pg" else "MariaDB InnoDB"
    ins = {b: {} for b in builds}
    for b in builds:
        x = text(f"tls-{b}")
        ic = num(rf"^{t} oltp {q}={c}: (\d+) instructions", x)
        it = num(rf"^{t} oltp {q}={s}: (\d+) instructions", x)
        ins[b] = dict(
            ic=ic, it=it, d=(it - ic) if ic is not None and it is not None else None,
            cpu_c=num(rf"^{t} oltp median client CPU per transaction: clear ([\d.]+) us", x),
            cpu_t=num(rf"^{t} oltp median client CPU per transaction: clear [\d.]+ us, TLS ([\d.]+) us", x),
            ucpu_c=num(rf"^{t} oltp median client user CPU per transaction: clear ([\d.]+) us", x),
            ucpu_t=num(rf"^{t} oltp median client user CPU per transaction: clear [\d.]+ us, TLS ([\d.]+) us", x),
            ucpu_d=num(rf"^{t} oltp median client user CPU per transaction: .* TLS adds ([-\d.]+) us", x),
            sc_c=num(rf"^{t} oltp {q}={c} system calls per transaction, whole process: ([\d.]+) in all", x),
            sc_t=num(rf"^{t} oltp {q}={s} system calls per transaction, whole process: ([\d.]+) in all", x),
            so_c=num(rf"^{t} oltp {q}={c} system calls per transaction, whole process: [\d.]+ in all, socket ([\d.]+)", x),
            li_c=num(rf"^{t} clear l.i0: (\d+) instructions/row", x),
            li_t=num(rf"^{t} tls l.i0: (\d+) instructions/row", x),
            cp_c=num(rf"^{t} clear l.i0 client CPU per row: (\d+) ns", x),
            cp_t=num(rf"^{t} tls l.i0 client CPU per row: (\d+) ns", x),
            lsc_c=num(rf"^{t} clear l.i0 system calls per row, whole process: ([\d.]+) in all", x),
            lsc_t=num(rf"^{t} tls l.i0 system calls per row, whole process: ([\d.]+) in all", x),
        )
    g = lambda k: [ins[b][k] for b in builds]
    row(f"{name}: oltp_read_write client instructions/txn, clear", g("ic"))
    row(f"{name}: oltp_read_write client instructions/txn, TLS", g("it"))
    row(f"{name}: TLS delta, instructions/txn", g("d"))
    row(f"{name}: oltp client CPU us/txn (median, timed), clear", g("cpu_c"), 1)
    row(f"{name}: oltp client CPU us/txn (median, timed), TLS", g("cpu_t"), 1)
    row(f"{name}: oltp client user CPU us/txn (median, timed), clear", g("ucpu_c"), 1)
    row(f"{name}: oltp client user CPU us/txn (median, timed), TLS", g("ucpu_t"), 1)
    row(f"{name}: oltp user CPU TLS adds, us/txn (goal <= 40)", g("ucpu_d"), 1)
    row(f"{name}: oltp system calls/txn (whole process), clear", g("sc_c"), 1)
    row(f"{name}: oltp system calls/txn, of them the socket's, clear", g("so_c"), 1)
    row(f"{name}: oltp system calls/txn (whole process), TLS", g("sc_t"), 1)
    row(f"{name}: l.i0 (2 clients) instructions/row in the inserters, clear", g("li_c"))
    row(f"{name}: l.i0 (2 clients) instructions/row in the inserters, TLS", g("li_t"))
    row(f"{name}: l.i0 (2 clients) client CPU ns/row (timed), clear", g("cp_c"))
    row(f"{name}: l.i0 (2 clients) client CPU ns/row (timed), TLS", g("cp_t"))
    row(f"{name}: l.i0 (2 clients) system calls/row (whole process), clear", g("lsc_c"), 3)
    row(f"{name}: l.i0 (2 clients) system calls/row (whole process), TLS", g("lsc_t"), 3)
    sb = text("sb")
    part = sb.split(f"== {'postgres' if t == 'pg' else 'innodb'} ")
    part = part[1].split("\n== ")[0] if len(part) > 1 else ""
    sbu = num(r"median user CPU per transaction: sysbench ([\d.]+) us", part)
    ixu = num(r"median user CPU per transaction: sysbench [\d.]+ us, ixbench ([\d.]+) us", part)
    bu = num(r"base \(BASE\) median client CPU per transaction: [\d.]+ us \(user ([\d.]+)", part)
    row(f"{name}: oltp user CPU us/txn (median, timed): ixbench", ([bu] if "base" in builds else []) + [ixu], 1)
    row(f"{name}: oltp user CPU us/txn (median, timed): sysbench", [None] * (len(builds) - 1) + [sbu], 1)
    row(f"{name}: oltp system calls/txn: sysbench", [None] * (len(builds) - 1) + [num(r"sysbench syscalls per transaction: ([\d.]+)", part)], 1)
    if sbu and ixu:
        row(f"{name}: oltp user CPU ixbench / sysbench, clear", [None] * (len(builds) - 1) + [ixu / sbu], 2)
    tp = text("sbtls").split(f"== {'postgres' if t == 'pg' else 'innodb'} ")
    tp = tp[1].split("\n== ")[0] if len(tp) > 1 else ""
    tsb = num(r"median user CPU per transaction: sysbench ([\d.]+) us", tp)
    tix = num(r"median user CPU per transaction: sysbench [\d.]+ us, ixbench ([\d.]+) us", tp)
    tbu = num(r"base \(BASE\) median client CPU per transaction: [\d.]+ us \(user ([\d.]+)", tp)
    row(f"{name}: oltp user CPU us/txn over TLS (median, timed): ixbench", ([tbu] if "base" in builds else []) + [tix], 1)
    row(f"{name}: oltp user CPU us/txn over TLS (median, timed): sysbench", [None] * (len(builds) - 1) + [tsb], 1)
    ratios = ([tbu / tsb if tbu and tsb else None] if "base" in builds else []) + [tix / tsb if tix and tsb else None]
    row(f"{name}: oltp user CPU ixbench / sysbench over TLS (goal <= 0.40)", ratios, 2)
sq = text("sq")
ratio = num(r"^median baseline=\d+ ixbench=\d+ ratio=([\d.]+)", sq)
oratio = num(r"^median other=\d+ other/baseline=([\d.]+)", sq)
row("SQLite l.i0: ixbench / bare loop, rows/s (medians, timed)", ([oratio] if "base" in builds else []) + [ratio], 3)
cg = dict(l.split() for l in text("cg").splitlines() if len(l.split()) == 2)
bare = float(cg["bare"]) / sqlrows if cg.get("bare", "").isdigit() else None
per = [float(cg[b]) / sqlrows if cg.get(b, "").isdigit() else None for b in builds]
row("SQLite l.i0: instructions/row, whole process: ixbench", per)
row("SQLite l.i0: instructions/row, whole process: bare loop", [None] * (len(builds) - 1) + [bare])
row("SQLite l.i0: bare loop / ixbench instructions (callgrind)", [bare / p if bare and p else None for p in per], 3)
print()
print("| figure | " + " | ".join(builds) + " |")
print("|---|" + "---|" * len(builds))
for name, vals in rows:
    print(f"| {name} | " + " | ".join(vals) + " |")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
