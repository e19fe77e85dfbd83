#!/usr/bin/env bash
# Figures of the code's shape that issue 32 ("one DBMS layer") sets goals on, printed from the
# source as it stands (nothing is built or run): the DBMS contract's methods per trait (required,
# i.e. without a default body, and provided), the files outside src/dbms/ and src/server/ that
# name a DBMS or cluster kind (a string literal compared, a ServerKind/ClusterKind/StartKind
# variant), and the longest functions under src/cmd/ and src/step/ (lines from `fn` to its
# closing brace). Usage: bench/structure.sh [TOP]   (TOP longest functions, default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - "${1:-10}" <<'PY'
import os, re, sys
top = int(sys.argv[1])
def files(root):
    for d, _, fs in os.walk(root):
        for f in sorted(fs):
            if f.endswith('.rs'):
                yield os.path.join(d, f)
def strip(s):
    # drop comments and string contents (keep the quotes), so braces count right
    out, i, n = [], 0, len(s)
    while i < n:
        if s.startswith('//', i):
            j = s.find('\n', i); i = n if j < 0 else j
        elif s.startswith('/*', i):
            j = s.find('*/', i); i = n if j < 0 else j + 2
        elif s[i] == 'r' and re.match(r'r#*"', s[i:i+4]) and (i == 0 or not (s[i-1].isalnum() or s[i-1] == '_')):
            m = re.match(r'r(#*)"', s[i:]); end = '"' + m.group(1)
            j = s.find(end, i + len(m.group(0))); out.append('""'); i = n if j < 0 else j + len(end)
        elif s[i] == '"':
            j = i + 1
            while j < n and s[j] != '"':
                j += 2 if s[j] == '\\' else 1
            out.append('""'); i = j + 1
        elif s[i] == "'" and re.match(r"'(\\.|[^\\'])'", s[i:i+4]):
            m = re.match(r"'(\\.[^']*|[^\\'])'", s[i:]); out.append("' '"); i += len(m.group(0))
        else:
            out.append(s[i]); i += 1
    return ''.join(out)
def block_end(s, i):
    depth = 0
    for j in range(i, len(s)):
        if s[j] == '{': depth += 1
        elif s[j] == '}':
            depth -= 1
            if depth == 0: return j
    return len(s)
# 1. contract: trait methods in src/dbms
print("DBMS contract (traits in src/dbms/): methods required / provided")
total_r = total_p = 0
for f in files('src/dbms'):
    s = strip(open(f).read())
    for m in re.finditer(r'pub trait (\w+)[^{]*\{', s):
        body = s[m.end():block_end(s, m.end() - 1)]
        req = prov = 0
        depth = 0; k = 0
        for fm in re.finditer(r'\bfn \w+', body):
            pre = body[:fm.start()]
            if pre.count('{') - pre.count('}') != 0: continue
            rest = body[fm.end():]
            semi, brace = rest.find(';'), rest.find('{')
            if semi >= 0 and (brace < 0 or semi < brace): req += 1
            else: prov += 1
        if req + prov:
            total_r += req; total_p += prov
            print(f"  {m.group(1):<16} {req:>3} / {prov:<3} {f}")
print(f"  {'all':<16} {total_r:>3} / {total_p:<3}")
# 2. files outside dbms/ and server/ naming a kind
names = r'postgres|postgresql|mysql|mariadb|sqlite|galera|spider|pg-shards|innodb|rocksdb|myrocks'
cmp_re = re.compile(r'(==|!=)\s*(Some\()?"(%s)"|"(%s)"\s*(\|[^=]*)?=>|"(%s)"\s*(==|!=)' % (names, names, names), re.I)
kind_re = re.compile(r'\b(ServerKind|ClusterKind|StartKind)::[A-Z]\w*')
print("\nFiles outside src/dbms/ and src/server/ that branch on or name a DBMS/cluster kind:")
count = 0
for f in files('src'):
    if f.startswith(('src/dbms/', 'src/server/')): continue
    raw = open(f).read()
    cut = raw.find('#[cfg(test)]')
    s = raw if cut < 0 else raw[:cut]
    hits = len(kind_re.findall(s)) + len(cmp_re.findall(s))
    if hits:
        count += 1
        print(f"  {hits:>3} {f}")
print(f"  {count} files")
# 3. longest functions in cmd/ and step/
print(f"\nLongest functions under src/cmd/ and src/step/ (top {top}; goal: none over ~120 lines):")
funcs = []
for root in ('src/cmd', 'src/step'):
    for f in files(root):
        raw = open(f).read(); s = strip(raw)
        for m in re.finditer(r'\bfn (\w+)', s):
            rest = s[m.end():]
            semi, brace = rest.find(';'), rest.find('{')
            if brace < 0 or (0 <= semi < brace): continue
            b = m.end() + brace
            e = block_end(s, b)
            lines = s[m.start():e].count('\n') + 1
            funcs.append((lines, f, m.group(1), s[:m.start()].count('\n') + 1))
funcs.sort(reverse=True)
seen = set()
shown = 0
for lines, f, name, line in funcs:
    if shown >= top: break
    print(f"  {lines:>4} {f}:{line} {name}")
    shown += 1
print(f"  {sum(1 for l, *_ in funcs if l > 120)} functions over 120 lines")
PY
