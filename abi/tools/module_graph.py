#!/usr/bin/env python3
"""The module import graph of a crate, one node per source file (module),
an edge for every `crate::x::y` / `super::x` path that names another module.
Prints the counts and every circle (strongly connected group of more than
one module); `-v` also prints each module's edges.

    python3 abi/tools/module_graph.py abi/src [-v]
"""
import os, re, sys
root = sys.argv[1]  # crate src dir
mods = {}
for d, _, fs in os.walk(root):
    for f in fs:
        if not f.endswith('.rs') or 'bin' in os.path.relpath(d, root).split(os.sep): continue
        p = os.path.join(d, f)
        rel = os.path.relpath(p, root)[:-3].split(os.sep)
        if rel[-1] in ('mod', 'lib'): rel = rel[:-1]
        mods['::'.join(rel)] = p
names = set(mods)
def resolve(path):
    parts = path.split('::')
    for i in range(len(parts), 0, -1):
        c = '::'.join(parts[:i])
        if c in names: return c
    return None
edges = {m: set() for m in mods}
for m, p in mods.items():
    src = open(p).read()
    src = re.sub(r'//[^\n]*', '', src)
    # expand `crate::a::{b, c::d}` groups (one level)
    for mm in re.finditer(r'crate::((?:\w+::)*)\{([^{}]*)\}', src):
        base = mm.group(1)
        for item in mm.group(2).split(','):
            item = item.strip().split(' as ')[0]
            if item:
                t = resolve((base + item).strip(':')) or resolve(base.strip(':'))
                if t and t != m and t != '': edges[m].add(t)
    for mm in re.finditer(r'crate::((?:\w+)(?:::\w+)*)', src):
        t = resolve(mm.group(1))
        if t and t != m and t != '': edges[m].add(t)
    # `super::x` inside a module
    for mm in re.finditer(r'\bsuper::((?:\w+)(?:::\w+)*)', src):
        parent = m.split('::')[:-1] if not p.endswith('mod.rs') else m.split('::')[:-2]
        t = resolve('::'.join(parent + mm.group(1).split('::')))
        if t and t != m and t != '': edges[m].add(t)
# Tarjan SCC
idx = {}; low = {}; st = []; on = set(); sccs = []; c = [0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in edges[v]:
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        sccs.append(comp)
for v in sorted(edges):
    if v not in idx: sc(v)
n_edges = sum(len(e) for e in edges.values())
print(f"modules: {len(mods)}, edges: {n_edges}")
cyc = [sorted(s) for s in sccs if len(s) > 1]
print(f"cycles (strongly connected groups of >1 module): {len(cyc)}")
for s in cyc: print(f"  [{len(s)}] " + ", ".join(s))
if '-v' in sys.argv:
    for m in sorted(edges):
        print(f"{m or '<root>'} -> {', '.join(sorted(edges[m]))}")
