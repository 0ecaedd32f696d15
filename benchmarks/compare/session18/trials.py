import re,sys,glob,collections,statistics
# usage: trials.py DIR [FIRST] -> per label: every trial's p50 (from trial FIRST on, default 0), sorted, their median and mean
d=sys.argv[1]
by=collections.defaultdict(list)
for f in sorted(glob.glob(d+'/pong-*.log')):
    m=re.match(r'.*/pong-(.+)-(\d+)\.log',f)
    if not m: continue
    label=m.group(1)
    for line in open(f):
        t=re.match(r'trial (\d) p50 one-way ([\d.]+) us',line)
        if t and int(t.group(1))>=int(sys.argv[2] if len(sys.argv)>2 else 0): by[label].append(float(t.group(2)))
for k,v in by.items():
    v.sort()
    print(f"{k:14s} n={len(v):2d} median={statistics.median(v):6.2f} mean={statistics.mean(v):6.2f}  " + " ".join(f"{x:.0f}" for x in v))
