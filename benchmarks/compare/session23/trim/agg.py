import json,sys,collections
# usage: agg.py file.json from_fraction [filter]
d=json.load(open(sys.argv[1]))
ev=d['recording']['events']
ts=sorted(e['values']['startTime'] for e in ev)
frac=float(sys.argv[2]); cut=ts[int(len(ts)*frac)] if ts else None
top=collections.Counter(); incl=collections.Counter(); thr=collections.Counter(); n=0
for e in ev:
    v=e['values']
    if v['startTime']<cut: continue
    fr=v['stackTrace']['frames'] if v.get('stackTrace') else []
    names=[f['method']['type']['name'].split('.')[-1]+'.'+f['method']['name'] for f in fr]
    t=v['sampledThread']['javaName'] if v.get('sampledThread') else '?'
    n+=1; thr[t]+=1
    if names: top[names[0]]+=1
    for x in set(names): incl[x]+=1
print('samples',n); print('threads',thr.most_common(8))
print('--- self'); [print(c, k) for k,c in top.most_common(35)]
print('--- inclusive'); [print(c, k) for k,c in incl.most_common(70)]
