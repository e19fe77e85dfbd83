#!/usr/bin/env bash
# Nothing a user sees changes: runs the same scenarios (every command, SQLite and the throwaway
# PostgreSQL and MariaDB servers, a dozen errors, every --help) with two ixbench binaries and
# prints what differs in what a user sees of them:
#  - stdout and stderr, with numbers, paths and ports masked (figures differ run to run; the
#    lines, their words and their order must not), and the exit status;
#  - run.json's config, its steps' names, statuses and errors, and the set of its key paths
#    (every field a reader may rely on, lists folded), compared whole.
# Usage: bench/same-output.sh BASE NEW [OUT] [FILTER]
#   BASE, NEW: the two binaries (e.g. a release build of the base commit and of this tree)
#   OUT: where the runs go (default a new temp directory); FILTER: run only scenarios whose
#   name contains it. Exit 0 when nothing differs, 1 otherwise (the differences printed).
# Load-dependent words are masked too: "(rate NOT met)" and a footnote that a step was shorter
# than an interval depend on the machine's load, not on the code.
set -uo pipefail
BASE=$(realpath "${1:?usage: same-output.sh BASE NEW [OUT] [FILTER]}")
NEW=$(realpath "${2:?usage: same-output.sh BASE NEW [OUT] [FILTER]}")
OUT=${3:-$(mktemp -d /tmp/same-output.XXXXXX)}
FILTER=${4:-}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")

# name | command line (without the binary; OUTDIR is replaced by the run's results directory)
SCENARIOS=$(cat <<'EOF'
help|--help
help-run|run --help
help-index|index --help
help-ddl|ddl --help
help-oltp|oltp --help
help-timeseries|timeseries --help
help-ab|ab --help
help-compare|compare --help
help-report|report --help
help-merge|merge --help
help-pattern|pattern --help
help-server|server --help
run-iibench|run --size smoke --seed 1 --out OUTDIR
run-oltp|run --workload oltp_read_write --size smoke --seed 1 --out OUTDIR
run-timeseries|run --workload timeseries --size smoke --seed 1 --out OUTDIR
run-kv|run --workload kv --size smoke --seed 1 --out OUTDIR
oltp|oltp --size smoke --seed 1 --out OUTDIR
timeseries|timeseries --size smoke --seed 1 --out OUTDIR
index|index --size smoke --seed 1 --out OUTDIR
index-ts|index --workload timeseries --size smoke --seed 1 --out OUTDIR
index-own|index --size smoke --seed 1 --index 'ix_own: price, customerid' --out OUTDIR
ddl|ddl --size smoke --seed 1 --out OUTDIR
ddl-oltp|ddl --workload oltp_read_write --size smoke --seed 1 --out OUTDIR
pattern|pattern code 'seq'
pattern-defaults|pattern code
null|run --target null --size smoke --seed 1 --out OUTDIR
pg-run|run --target postgres --size smoke --seed 1 --out OUTDIR
pg-ddl|ddl --target postgres --size smoke --seed 1 --out OUTDIR
pg-index|index --target postgres --size smoke --seed 1 --out OUTDIR
maria-run|run --target mariadb --size smoke --seed 1 --out OUTDIR
maria-oltp|run --target mariadb --workload oltp_read_write --size smoke --seed 1 --out OUTDIR
err-flag|run --no-such-flag
err-workload|run --workload nosuch
err-size|run --size huge
err-target|run --target postgres://nobody@127.0.0.1:1/x --size smoke --out OUTDIR
err-other-option|run --workload kv --rows 10 --out OUTDIR
err-method|ddl --method pt-osc --size smoke --out OUTDIR
err-like|index --like no_such_table --size smoke --out OUTDIR
err-report|report /nonexistent/dir
err-compare|compare /nonexistent/a -- /nonexistent/b
err-merge|merge --out OUTDIR /nonexistent/a
err-pattern|pattern code 'nonsense(('
err-server|server stop /nonexistent
EOF
)

mask() {
  # paths of this run and temp dirs, ports, numbers; load-dependent words; spacing
  sed -E -e "s#$OUT/(base|new)/[A-Za-z0-9_.-]+#OUTDIR#g" \
    -e 's#/tmp/[A-Za-z0-9_.-]+#TMP#g' \
    -e 's#[A-Za-z0-9_.-]*ixbench[A-Za-z0-9_.-]* (<|\[|run|index|ddl|oltp|timeseries|ab|compare|report|merge|pattern|server)#ixbench \1#g' \
    -e 's#127\.0\.0\.1:[0-9]+#127.0.0.1:PORT#g' \
    -e 's/ok \(rate NOT met\)/ok/g; s/ \[[0-9]+\]//g; /^\[[0-9]+\] /d' \
    -e 's/ \(--interval [0-9.]+ would show it\)//' \
    -e 's/[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?/#/g' \
    -e 's/[[:space:]]+/ /g; s/ $//' |
  # lines whose presence or count depends on the load: interval lines (all figures), the
  # schema change's windows, states, recovery and backlog sentences, quiet waits
  grep -Ev -e '^ ?(# )*#( backlog #)?$' -e '^\[ #s \] thds:' \
    -e '^ ?# (baseline|during|catch-up|after)( |$)' -e '^(during DDL, point|baseline \(no DDL\))' \
    -e 'state: |recovered|RELAPSE|relapse|backlog: |^ DDL # s \(|NO VERDICT|waited # s before' \
    -e '^ native; server CPU' -e 'WARNING: the probe was not steady' | uniq
}

shape() {
  python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("no run.json:", type(e).__name__); sys.exit()
def paths(v, p, out):
    if isinstance(v, dict):
        for k, x in v.items():
            paths(x, p + "." + k, out)
    elif isinstance(v, list):
        for x in v:
            paths(x, p + "[]", out)
    else:
        out.add(p)
cfg = dict(d.get("config") or {})
cfg.pop("command_line", None)
if isinstance(cfg.get("workload_table"), dict):
    cfg["workload_table"].pop("seconds", None)   # a measured figure
print("config:", json.dumps(cfg, sort_keys=True))
print("status:", d.get("status"), "error:", d.get("error"))
for s in d.get("steps") or []:
    print("step:", s.get("name"), s.get("status"), s.get("error"))
# ddl's points: their names and whether each has a verdict state (the state is the load's)
for p in ((d.get("ddl") or {}).get("points") or []):
    print("point:", p.get("name") or p.get("label"))
ps = set(); paths(d, "", ps)
# fields present only when the load did something (a relapse, a blip, progress samples)
import re
skip = re.compile(r"\.impact\.|\.progress|\.warnings|no_verdict")
for p in sorted(ps):
    if not skip.search(p):
        print("key:", p)
PY
}

differ=0
n=0
while IFS='|' read -r name cmd; do
  [ -z "$name" ] && continue
  [ -n "$FILTER" ] && [[ "$name" != *"$FILTER"* ]] && continue
  n=$((n + 1))
  for side in base new; do
    bin=$BASE; [ $side = new ] && bin=$NEW
    dir="$OUT/$side/$name"
    rm -rf "$dir" "$dir.out"
    mkdir -p "$OUT/$side"
    line=${cmd//OUTDIR/$dir}
    (cd "$OUT/$side" && eval "timeout 600 \"$bin\" $line" >"$dir.out" 2>&1 </dev/null
     echo "exit: $?" >>"$dir.out")
    mask <"$dir.out" >"$dir.masked"
    if [ -f "$dir/run.json" ]; then shape "$dir/run.json" >"$dir.shape"; else : >"$dir.shape"; fi
  done
  if ! diff -q "$OUT/base/$name.masked" "$OUT/new/$name.masked" >/dev/null \
     || ! diff -q "$OUT/base/$name.shape" "$OUT/new/$name.shape" >/dev/null; then
    differ=$((differ + 1))
    echo "== $name: differs ($cmd)"
    diff "$OUT/base/$name.masked" "$OUT/new/$name.masked" | head -20
    diff "$OUT/base/$name.shape" "$OUT/new/$name.shape" | head -20
  else
    echo "== $name: same ($(tail -1 "$OUT/new/$name.out"))"
  fi
done <<<"$SCENARIOS"
echo "$n scenarios, $differ differ; runs in $OUT"
[ $differ -eq 0 ]
