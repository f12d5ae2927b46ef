import collections
for r in (0,1):
    ev=[tuple(map(int,l.split())) for l in open(f'/tmp/trace.{r}')]
    ev=ev[len(ev)*4//10:]
    d=collections.defaultdict(list)
    for a,b in zip(ev,ev[1:]): d[(a[0],b[0])].append(b[1]-a[1])
    print('rank',r)
    for k,v in sorted(d.items(), key=lambda kv:-len(kv[1]))[:14]:
        v.sort(); print(' ',k, len(v), 'med', v[len(v)//2], 'p10', v[len(v)//10], 'p90', v[len(v)*9//10])
