import sys, collections, statistics
ev=[];ts=[]
for line in open(sys.argv[1]):
    a,b=line.split(); ev.append(int(a)); ts.append(int(b))
d=collections.defaultdict(list)
for i in range(1,len(ev)):
    d[(ev[i-1],ev[i])].append(ts[i]-ts[i-1])
ghz=float(sys.argv[2]) if len(sys.argv)>2 else 2.1
tot=0
for k in sorted(d, key=lambda k:-len(d[k])):
    v=sorted(d[k]); n=len(v)
    if n<100: continue
    med=v[n//2]/ghz; mean=sum(v)/n/ghz
    print("%d->%d n=%d med=%.1f p25=%.1f p75=%.1f mean=%.1f ns"%(k[0],k[1],n,med,v[n//4]/ghz,v[3*n//4]/ghz,mean))
