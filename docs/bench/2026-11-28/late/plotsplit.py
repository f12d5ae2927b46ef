#!/usr/bin/env python3
"""plotsplit.py COMPARE_OUT MODE NP OUTDIR: split compare.py's two columns into bench.c-format files openmpi-MODE.txt and gorun-MODE.txt"""
import sys, os
src, mode, np, out = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
rows = []
for line in open(src):
    if line.startswith('#') or not line.strip():
        continue
    f = line.split()
    if len(f) >= 3 and f[1] != 'nan' and f[2] != 'nan':
        rows.append((f[0], f[1], f[2]))
def head():
    if mode == 'lat':
        return "# OSU-style MPI Latency Test (own implementation)\n# %-10s %18s\n" % ("Size", "Latency (us)")
    if mode in ('bw', 'bibw'):
        name = {'bw': 'Bandwidth', 'bibw': 'Bi-Directional Bandwidth'}[mode]
        return "# OSU-style MPI %s Test, window 64 (own implementation)\n# %-10s %18s\n" % (name, "Size", "Bandwidth (MB/s)")
    return "# OSU-style MPI %s Latency Test (own implementation), np=%s\n# %-10s %18s\n" % (mode, np, "Size", "Avg Latency (us)")
for i, name in ((1, 'openmpi'), (2, 'gorun')):
    with open(os.path.join(out, f"{name}-{mode}.txt"), 'w') as fh:
        fh.write(head())
        for r in rows:
            fh.write("%-12s %18s\n" % (r[0], r[i]))
