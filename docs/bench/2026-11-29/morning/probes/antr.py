import sys, statistics
ev=[]
for r in (0,1):
    for line in open(f"/tmp/trace.rank{r}"):
        e,t=line.split(); ev.append((int(t), r, int(e)))
ev.sort()
ghz=float(sys.argv[1]) if len(sys.argv)>1 else 2.0
from collections import defaultdict
d=defaultdict(list)
for a,b in zip(ev, ev[1:]):
    key=f"r{a[1]}:{a[2]} -> r{b[1]}:{b[2]}"
    d[key].append((b[0]-a[0])/ghz)
tot=0
for k,v in sorted(d.items(), key=lambda kv:-len(kv[1])):
    if len(v)<1000: continue
    v.sort()
    print(f"{k:22s} n={len(v):7d} p10={v[len(v)//10]:7.1f} med={v[len(v)//2]:7.1f} p90={v[9*len(v)//10]:7.1f} mean={sum(v)/len(v):8.1f} ns")
