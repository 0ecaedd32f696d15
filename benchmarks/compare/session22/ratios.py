#!/usr/bin/env python3
"""Session 22: each library row's ratio to the perftest beside it, run 1 against run 2 (results.csv; a metric may hold a comma)."""
import statistics, sys
def load(p):
    d = {}
    for line in open(p).read().splitlines()[1:]:
        c = line.split(',')
        d[(','.join(c[:-4]), c[-4])] = float(c[-1])
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
rows = [(m, s, a[(m, s)], b[(m, s)]) for (m, s) in a if (m, s) in b and not s.startswith('perftest')
        and 'p99' not in m and a[(m, s)] == a[(m, s)] and b[(m, s)] == b[(m, s)]]
print('| metric | system | run 1 | run 2 | change |\n|---|---|---:|---:|---:|')
for m, s, x, y in rows:
    print('| %s | %s | %.2fx | %.2fx | %+.0f%% |' % (m, s, x, y, (y / x - 1) * 100))
ch = [abs(y / x - 1) for _, _, x, y in rows]
print('\n%d rows; change between the runs: median %.0f%%, largest %.0f%%' % (len(ch), statistics.median(ch) * 100, max(ch) * 100))
