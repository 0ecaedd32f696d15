import re,sys,glob,collections,statistics
# usage: lows.py DIR -> per label: medians over every trial of p50, p10, p1 (one way, us)
d=sys.argv[1]
by=collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d+'/pong-*.log')):
    m=re.match(r'.*/pong-(.+)-(\d+)\.log',f)
    if not m: continue
    for line in open(f):
        t=re.match(r'trial (\d) p50 one-way ([\d.]+) us p99 ([\d.]+) p10 ([\d.]+) p1 ([\d.]+)',line)
        if t:
            for k,i in (('p50',2),('p10',4),('p1',5)): by[m.group(1)][k].append(float(t.group(i)))
for lab,v in sorted(by.items()):
    print(f"{lab:10s} trials={len(v['p50']):2d} " + "  ".join(f"{k} median {statistics.median(v[k]):6.2f} (range {min(v[k]):.1f}-{max(v[k]):.1f})" for k in ('p50','p10','p1')))
