#!/usr/bin/env python3
# lat16sum.py FILE: medians per placement (N: shmfloor < 150 ns, F: 150-330) of lat16.sh's output.
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for tag, lo, hi in (('N', 0, 150), ('F', 150, 330)):
    sel = [r for r in rows if lo <= float(r[0]) < hi]
    if not sel:
        continue
    out = {}
    for r in sel:
        for kv in r[1:]:
            k, v = kv.split('=')
            out.setdefault(k, []).append([float(x) for x in v.strip('/').split('/')])
    o8, o16 = (st.median(x[i] for x in out['ompi']) for i in (0, 1))
    print(f'{tag}: {len(sel)} rounds')
    for k, v in out.items():
        m8, m16 = (st.median(x[i] for x in v) for i in (0, 1))
        print(f'  {k:6} 8K {m8:.3f} ({m8/o8:.3f})  16K {m16:.3f} ({m16/o16:.3f})  16K mean {st.mean(x[1] for x in v):.3f}')
