#!/usr/bin/env bash
# Figures of the code's shape that issue 32 ("one DBMS layer") sets goals on, printed from the
# source as it stands (nothing is built or run): the DBMS contract's methods per trait (required,
# i.e. without a default body, and provided), the files outside src/dbms/ and src/server/ that
# name a DBMS or cluster kind (a string literal compared, a ServerKind/ClusterKind/StartKind
# variant), the longest functions under src/cmd/ and src/step/ (lines from `fn` to its
# closing brace), the contract's core and capabilities, the files each DBMS engine (a row
# `KIND` of src/dbms/registry.rs, in its folder) touches outside its folder, and the files each
# workload (a module of src/workload/ with its registry entry) touches outside its own.
# Usage: bench/structure.sh [TOP]   (TOP longest functions, default 10)
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
per_trait = []
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
            per_trait.append((m.group(1), req, prov))
            print(f"  {m.group(1):<16} {req:>3} / {prov:<3} {f}")
print(f"  {'all':<16} {total_r:>3} / {total_p:<3}")
# The core is what every engine must write (the required methods of Driver and Conn); the
# capabilities are what an engine may override (every provided method of Driver, Admin,
# IndexLab and DdlDialect: without it, the default says "unknown" or "not supported"; and
# EngineTools, the schema-change tools an engine's row hands out, where it has them).
core = sum(r for n, r, p in per_trait if n in ('Driver', 'Conn'))
caps = sum(p for n, r, p in per_trait if n in ('Driver', 'Admin', 'IndexLab', 'DdlDialect', 'EngineTools'))
print(f"  core (required of Driver, Conn): {core}; capabilities (provided of Driver, Admin, "
      f"IndexLab, DdlDialect, EngineTools): {caps}")
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
# 4. files each engine touches outside its folder
def module_of(path):
    parts = path[len('src/'):-3].split('/')
    if parts[-1] in ('mod', 'lib', 'main'):
        parts.pop()
    return parts
def code_of(raw):
    cut = raw.find('#[cfg(test)]')
    return re.sub(r'//[^\n]*', '', raw if cut < 0 else raw[:cut])
# The protocol clients and their settings' readers are shared by every engine of a protocol
# (a name they compare is the protocol's own word: a URL scheme, `sslnegotiation=postgres`).
shared = {'src/dbms/pgwire.rs', 'src/dbms/mywire.rs', 'src/dbms/conninfo.rs',
          'src/dbms/mycnf.rs', 'src/dbms/netio.rs', 'src/dbms/tls.rs'}
engines = {}
for f in files('src/dbms'):
    m = re.search(r'pub static KIND: Kind = Kind \{\s*name: "([a-z-]+)"', open(f).read())
    if m:
        engines[m.group(1)] = (module_of(f), f)
words = {'mysql': 'mysql|mariadb', 'postgres': 'postgres|postgresql'}
path_re = re.compile(r'\b((?:crate|super|self)(?:::super)*(?:::[a-z_][a-z0-9_]*)+)')
def names_module(here, s, mod):
    # whether code `s` of module `here` has a path (crate::, super::, self::) into module `mod`
    for m in path_re.finditer(s):
        segs = m.group(1).split('::')
        if segs[0] == 'crate':
            p = segs[1:]
        else:
            p, i = list(here), (1 if segs[0] == 'self' else 0)
            while i < len(segs) and segs[i] == 'super':
                p.pop(); i += 1
            p += segs[i:]
        if p[:len(mod)] == mod:
            return True
    return False
print("\nFiles each DBMS engine touches outside its folder (non-test code naming its module or "
      "comparing its name; the goal of issue 32 is 0):")
for name, (mod, f0) in sorted(engines.items()):
    folder = os.path.dirname(f0) + '/' if f0.endswith('/mod.rs') else f0
    name_re = re.compile(r'(==|!=)\s*(Some\()?"(%s)"|"(%s)"[^;{}\n]*=>|"(%s)"\s*(==|!=)|'
                         r'matches!\([^;]*?"(%s)"' % ((words.get(name, name),) * 4))
    hits = []
    for f in files('src'):
        if f.startswith(folder) or f.endswith('/tests.rs'):
            continue
        here = module_of(f)
        s = code_of(open(f).read())
        why = names_module(here, s, mod)
        # in its parent: `pub mod NAME;`, `NAME::KIND`
        if here == mod[:-1] and re.search(r'\b%s::|\bmod %s;' % (mod[-1], mod[-1]), s):
            why = True
        if f not in shared and name_re.search(s):
            why = True
        if why:
            hits.append(f[len('src/'):])
    print(f"  {name:<9} {len(hits):>2}: {', '.join(hits)}")
# 5. files each workload touches outside its own: a workload is a module of src/workload/ that
# defines its registry entry (as build.rs finds it); its own files are its file or folder and
# the files of its name's prefix (`oltp_run.rs` is the OLTP mixes'); a file outside naming its
# module counts (the registry's option fields of the workloads with options of their own, and
# the commands and steps tests/workload_names.rs lists with their reasons).
workloads = {}
for e in sorted(os.listdir('src/workload')):
    p = os.path.join('src/workload', e)
    main = os.path.join(p, 'mod.rs') if os.path.isdir(p) else p
    if not main.endswith('.rs') or not os.path.isfile(main) or e == 'mod.rs':
        continue
    c = code_of(open(main).read())
    if re.search(r'^pub fn (entry|entries)\(\) -> ', c, re.M):
        name = e[:-3] if e.endswith('.rs') else e
        # an entry in `NAME_run.rs` is the workload NAME's (its declaration to the runner)
        if name.endswith('_run') and os.path.isfile(f'src/workload/{name[:-4]}.rs'):
            name, p = name[:-4], f'src/workload/{name[:-4]}.rs'
        workloads[name] = p
print("\nFiles each workload touches outside its own (non-test code naming its module; its "
      "pub mod and registry entry are found by build.rs):")
for name, own in workloads.items():
    mod = ['workload', name]
    hits = []
    for f in files('src'):
        if f == own or f.startswith(own + '/') or f.startswith(f'src/workload/{name}_'):
            continue
        here = module_of(f)
        s = code_of(open(f).read())
        why = names_module(here, s, mod)
        # in its parent: `pub mod NAME;`
        if here == ['workload'] and re.search(r'\bmod %s;' % name, s):
            why = True
        if why:
            hits.append(f[len('src/'):])
    print(f"  {name:<11} {len(hits):>2}: {', '.join(hits)}")
PY
