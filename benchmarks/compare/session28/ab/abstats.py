#!/usr/bin/env python3
"""Per JVM of a within-JVM A/B boot (ab*-info.txt): the median of A and of B over trials 1-11 (trial 0 is
the first after warm-up and is left out), and B - A; then, per flag and mode, the median of those differences."""
import re, sys, statistics as st
rows = {}
for path in sys.argv[1:]:
    for line in open(path):
        m = re.match(r'(\S+) (\S+) (\S+) RESULT .*\| (.*)', line)
        if not m: continue
        tag, mode, flag, trials = m.groups()
        t = [(x[0], float(x[1:])) for x in trials.split()]
        a = st.median(v for k, v in t[1:] if k == 'A'); b = st.median(v for k, v in t[1:] if k == 'B')
        print(f"{tag:18} {flag:12} {mode:6} A {a:6.2f}  B {b:6.2f}  B-A {b - a:+.2f} us")
        rows.setdefault((flag, mode), []).append(b - a)
for (flag, mode), d in sorted(rows.items()):
    print(f"{flag:12} {mode:6} JVMs {len(d)}  B-A median {st.median(d):+.2f} us, range {min(d):+.2f} to {max(d):+.2f}")
