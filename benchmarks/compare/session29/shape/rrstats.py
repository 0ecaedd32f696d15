import sys, statistics, re, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith('pong '):
        f = line.split()
        try: d[(f[1], f[2])].append(float(f[4]))
        except: pass
for k in sorted(d):
    v = sorted(d[k]); print(k[0], k[1], ' '.join('%.2f' % x for x in v), 'median %.2f mean %.2f n %d' % (statistics.median(v), statistics.mean(v), len(v)))
