#!/usr/bin/env python3
"""bands.py DIR: markdown rows (mode | 0-64 B | 128 B-2 KiB | 4-32 KiB | 64 KiB-4 MiB) from compare.py outputs, plus ring/shift and coll ranges."""
import sys, os
d = sys.argv[1]
bands = [(0, 64), (128, 2048), (4096, 32768), (65536, 1 << 22)]
def rows(f):
    out = []
    p = os.path.join(d, f)
    if not os.path.exists(p): return out
    for line in open(p):
        x = line.split()
        if len(x) == 4 and not line.startswith("#"):
            try: out.append((x[0], float(x[3])))
            except ValueError: pass
    return out
for m in ("lat", "bw", "bibw", "mr"):
    r = rows(m + ".txt")
    cells = []
    for lo, hi in bands:
        v = [q for s, q in r if lo <= int(s) <= hi]
        cells.append(f"{min(v):.2f}–{max(v):.2f}" if v else "—")
    print(f"| {m} | " + " | ".join(cells) + " |")
for m in ("ring", "shift"):
    r = rows(m + ".txt")
    print(m, r[0][1] if r else None)
for np in (2, 4, 8):
    cells = []
    for op in ("allreduce", "bcast", "reduce", "allgather", "alltoall"):
        r = rows(f"{op}-np{np}.txt")
        if not r: cells.append("—"); continue
        lo, hi = min(q for s, q in r), max(q for s, q in r)
        over = [(s, q) for s, q in r if q > 1.0]
        c = f"{lo:.2f}–{hi:.2f}"
        if over: c += " (" + ", ".join(f"{int(s)//1024 if int(s)>=1024 else s}{' KiB' if int(s)>=1024 else ' B'} {q:.2f}" for s, q in over) + ")"
        cells.append(c)
    b = rows(f"barrier-np{np}.txt")
    cells.append(f"{b[0][1]:.2f}" if b else "—")
    print(f"| {np} | " + " | ".join(cells) + " |")
