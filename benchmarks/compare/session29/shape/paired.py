import sys, re, statistics
# pairs each pass's A and B per mode: diff B - A
A, B = sys.argv[2], sys.argv[3]
cur = {}; diffs = {}
for line in open(sys.argv[1]):
    f = line.split()
    if line.startswith('pass'): cur = {}
    if line.startswith('pong ') and len(f) > 4:
        try: cur[(f[1], f[2])] = float(f[4])
        except: continue
        for m in ('spin', 'event'):
            if (A, m) in cur and (B, m) in cur and f[2] == m:
                diffs.setdefault(m, []).append(cur[(B, m)] - cur[(A, m)]); del cur[(A, m)]; del cur[(B, m)]
for m, v in diffs.items():
    print(m, B, '-', A, ' '.join('%+.2f' % x for x in v), 'median %+.2f mean %+.2f; B faster in %d of %d' % (statistics.median(v), statistics.mean(v), sum(1 for x in v if x < 0), len(v)))
