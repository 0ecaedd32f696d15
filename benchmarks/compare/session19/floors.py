import re,sys,glob,collections,statistics
# usage: floors.py LOGDIR [LABEL...] -> per label, over its trials from trial 1 on: the median p50, p10 and p1,
# and the lowest p1 (one way, us). The p1 is the fastest 1% of a trial's round trips: the floor under the per-run modes.
d=sys.argv[1]
p50=collections.defaultdict(list); p10=collections.defaultdict(list); p1=collections.defaultdict(list)
for f in sorted(glob.glob(d+'/pong-*.log')):
    lab=re.match(r'.*/pong-(.+)-\d\.log',f).group(1)
    for line in open(f):
        t=re.search(r'trial (\d) p50 one-way ([\d.]+) us p99 [\d.]+ p10 ([\d.]+) p1 ([\d.]+)',line)
        if t and int(t.group(1))>=1:
            p50[lab].append(float(t.group(2))); p10[lab].append(float(t.group(3))); p1[lab].append(float(t.group(4)))
print("| label | trials | median p50 | median p10 | median p1 | lowest p1 |")
print("|---|---:|---:|---:|---:|---:|")
for k in (sys.argv[2:] or sorted(p50)):
    print(f"| {k} | {len(p50[k])} | {statistics.median(p50[k]):.1f} | {statistics.median(p10[k]):.1f} | {statistics.median(p1[k]):.1f} | {min(p1[k]):.1f} |")
