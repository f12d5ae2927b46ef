import sys,subprocess,re
def load(f):
    out=subprocess.run(['callgrind_annotate','--threshold=100',f],capture_output=True,text=True).stdout
    d={}
    for l in out.splitlines():
        m=re.match(r'^\s*([\d,]+) \(\s*[\d.]+%\)\s+(\S+?):(\S.*?)(?: \[.*\])?$',l)
        if m:
            name=m.group(3)
            d[name]=d.get(name,0)+int(m.group(1).replace(',',''))
    return d
a=load(sys.argv[1]); b=load(sys.argv[2]); n=float(sys.argv[3])
rows=sorted(((b.get(k,0)-a.get(k,0))/n,k) for k in b)
tot=0
for v,k in reversed(rows):
    if v>=float(sys.argv[4]): print("%7.1f %s"%(v,k.replace('github.com/gorun-mpi/gorun/','')))
    tot+=v
print("total",tot)
