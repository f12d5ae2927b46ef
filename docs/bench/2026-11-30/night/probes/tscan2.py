import collections, sys
for r in (0,1):
    lines=open(f'/tmp/tsc.{r}').read().split('\n')
    ghz=float(lines[0].split()[1])
    ev=[tuple(map(int,l.split())) for l in lines[1:] if l]
    ev=ev[len(ev)*4//10:]
    d=collections.defaultdict(list)
    for a,b in zip(ev,ev[1:]): d[(a[0],b[0])].append((b[1]-a[1])/ghz)
    print('rank',r,'ghz %.3f'%ghz, 'events', len(ev))
    tot=len(ev)
    for k,v in sorted(d.items(), key=lambda kv:-len(kv[1]))[:int(sys.argv[1]) if len(sys.argv)>1 else 24]:
        v.sort(); print('  %-10s'%(k,), len(v), 'med %.0f p10 %.0f p90 %.0f'%(v[len(v)//2], v[len(v)//10], v[len(v)*9//10]))
