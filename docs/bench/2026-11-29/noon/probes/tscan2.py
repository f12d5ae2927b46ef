import sys, statistics as st
mhz=2100.0
names={11:'planned',12:'started',13:'tracked',14:'btlsent',15:'matched',16:'delivered',17:'unlocked',18:'finished',1:'Send>',2:'Send<',3:'Recv>',4:'Recv<',5:'rndv seen',6:'read>',7:'read<',8:'fin sent',9:'fin seen',10:'rndv sent'}
for r in (0,1):
    ev=[tuple(map(int,l.split())) for l in open('/tmp/tsc.%d'%r)]
    start = 1 if r==0 else 3
    its=[]; cur=None
    for e,t in ev:
        if e==start:
            if cur: its.append(cur)
            cur=[(e,t)]
        elif cur is not None: cur.append((e,t))
    seqs={}
    for it in its:
        key=tuple(e for e,_ in it)
        seqs.setdefault(key,[]).append(it)
    for key,v in sorted(seqs.items(), key=lambda kv:-len(kv[1]))[:2]:
        print("rank",r,"count",len(v),"seq"," ".join(names[e] for e in key))
        parts=[]
        for i in range(1,len(key)):
            d=[(it[i][1]-it[i-1][1])*1000/mhz for it in v]
            parts.append("%s %.0f"%(names[key[i]], st.median(d)))
        tot=[(it[-1][1]-it[0][1])*1000/mhz for it in v]
        print("   ", " | ".join(parts), "| total %.0f"%st.median(tot))
