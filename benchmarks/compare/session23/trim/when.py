import json,sys
d=json.load(open(sys.argv[1])); key=sys.argv[2]
ev=d['recording']['events']
from datetime import datetime
def t(s): return datetime.fromisoformat(s.replace('Z','+00:00')).timestamp()
t0=min(t(e['values']['startTime']) for e in ev)
hits=[]; allt=[]
for e in ev:
    v=e['values']; fr=v['stackTrace']['frames'] if v.get('stackTrace') else []
    names=[f['method']['type']['name'].split('/')[-1]+'.'+f['method']['name'] for f in fr]
    tt=t(v['startTime'])-t0; allt.append(tt)
    if any(key in n for n in names): hits.append((tt, v['sampledThread']['javaName'], [n for n in names][:14]))
import collections
b=collections.Counter(int(x) for x in allt); h=collections.Counter(int(x[0]) for x in hits)
print('second: samples / hits'); print(' '.join(f'{s}:{b[s]}/{h[s]}' for s in sorted(b)))
for x in hits[:int(sys.argv[3]) if len(sys.argv)>3 else 3]: print(round(x[0],2), x[1], ' < '.join(x[2]))
