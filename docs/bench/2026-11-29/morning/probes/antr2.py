import sys
# per-rank consecutive-mark intervals, and cross-rank from the iteration start
ghz=2.1
for r in (0,1):
    ev=[tuple(map(int,l.split())) for l in open(f"/tmp/trace.rank{r}")]
    from collections import defaultdict
    d=defaultdict(list)
    for (e1,t1),(e2,t2) in zip(ev,ev[1:]):
        if e1==2: continue
        d[(e1,e2)].append((t2-t1)/ghz)
    for k,v in sorted(d.items()):
        if len(v)<100: continue
        v.sort(); print(f"rank{r} {k[0]:2d}->{k[1]:2d} n={len(v):5d} p10={v[len(v)//10]:8.0f} med={v[len(v)//2]:8.0f} p90={v[9*len(v)//10]:8.0f} ns")
