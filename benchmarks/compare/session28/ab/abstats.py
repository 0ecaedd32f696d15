#!/usr/bin/env python3
"""Per JVM of a within-JVM A/B boot (ab*-info.txt): B - A over adjacent pairs of trials (2,3), (4,5) ... (10,11),
whose sides differ (ABBA order), as their median; the first pair, which holds the trial right after warm-up, is
left out. A pair is robust to a JVM that switches latency mode between pairs, where medians over all of a side's
trials are not. Then, per flag and mode, the median of the JVMs' figures."""
import re, sys, statistics as st
rows = {}
for path in sys.argv[1:]:
    for line in open(path):
        m = re.match(r'(\S+) (\S+) (\S+) RESULT .*\| (.*)', line)
        if not m: continue
        tag, mode, flag, trials = m.groups()
        t = [(x[0], float(x[1:])) for x in trials.split()]
        d = []
        for i in range(2, len(t) - 1, 2):
            (s0, v0), (s1, v1) = t[i], t[i + 1]
            if s0 != s1:
                d.append(v1 - v0 if s1 == 'B' else v0 - v1)
        pm = st.median(d)
        print(f"{tag:18} {flag:12} {mode:6} pairs {' '.join(f'{x:+.2f}' for x in d)}  B-A {pm:+.2f} us")
        rows.setdefault((flag, mode), []).append(pm)
for (flag, mode), d in sorted(rows.items()):
    print(f"{flag:12} {mode:6} JVMs {len(d)}  B-A median {st.median(d):+.2f} us, range {min(d):+.2f} to {max(d):+.2f}")
