import sys, statistics as st
files=sys.argv[1:]
evs=[]
for f in files:
    L=[tuple(map(int,l.split())) for l in open(f)]
    evs.append(L)
def med(xs): return st.median(xs) if xs else float('nan')
for i,L in enumerate(evs):
    n=len(L); L=L[n//5: n*9//10]
    d={}
    for a,b in zip(L,L[1:]):
        d.setdefault((a[0],b[0]),[]).append(b[1]-a[1])
    print("rank file",files[i])
    for k,v in sorted(d.items(), key=lambda kv:-len(kv[1])):
        if len(v)>100: print("  %2d->%2d n=%6d med=%6.0f ns p25=%6.0f" % (k[0],k[1],len(v),med(v),sorted(v)[len(v)//4]))
def occ(L,e): return [t for (x,t) in L if x==e]
for (x,y) in [(8,2),(5,9)]:
    for A,B in [(0,1),(1,0)]:
        a=occ(evs[A],x); b=occ(evs[B],y)
        m=min(len(a),len(b)); ds=[b[k]-a[k] for k in range(m//5, m*9//10)]
        print("cross %d(rank%d)->%d(rank%d): med %.0f ns" % (x,A,y,B,med(ds)))
