#!/usr/bin/env python3
"""multi.py variant: order of sides rotates each round; reports median of
per-round ratios to ompi (and medians of times)."""
import sys, subprocess, statistics, os, argparse, shlex
sys.path.insert(0, "/work/shared/bench")
import compare
ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--np", type=int, default=2)
ap.add_argument("--min", type=int, default=0)
ap.add_argument("mode")
ap.add_argument("sides", nargs="+")
a = ap.parse_args()
exe = compare.ensure_reference("/tmp/gorun-bench-ref")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
ref = ["mpirun.openmpi", "-np", str(a.np), "--oversubscribe", exe, a.mode]
sides = [("ompi", ref)] + [(s.split("=", 1)[0], shlex.split(s.split("=", 1)[1])) for s in a.sides]
data = {n: {} for n, _ in sides}
rounds = []
for r in range(a.rounds):
    k = r % len(sides)
    order = sides[k:] + sides[:k]
    got = {}
    for n, c in order:
        got[n] = compare.parse(a.mode, compare.run(c, env, 600))
        for kk, v in got[n].items():
            data[n].setdefault(kk, []).append(v)
    rounds.append(got)
    print(f"# round {r+1}/{a.rounds}", file=sys.stderr, flush=True)
names = [n for n, _ in sides]
print(f"# mode={a.mode} np={a.np} rounds={a.rounds}: median times; median of per-round ratios to ompi [lo-hi quartiles]")
print("#" + "".join(f"{n:>11}" for n in ["size"] + names) + "".join(f"{'/'+n:>18}" for n in names[1:]))
for k in sorted(data["ompi"], key=lambda x: (isinstance(x, str), x)):
    if not isinstance(k, str) and k < a.min:
        continue
    med = [statistics.median(data[n][k]) if k in data[n] else float("nan") for n in names]
    line = " " + f"{str(k):>10}" + "".join(f"{m:11.3f}" for m in med)
    for n in names[1:]:
        rs = sorted(g[n][k] / g["ompi"][k] for g in rounds if k in g[n] and k in g["ompi"])
        q = statistics.quantiles(rs, n=4) if len(rs) >= 2 else [rs[0]] * 3
        line += f"  {statistics.median(rs):5.2f} [{q[0]:4.2f}-{q[2]:4.2f}]"
    print(line)
