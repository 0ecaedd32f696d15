#!/usr/bin/env python3
"""Reads a before/after log of Big's ROW lines (vm21b.txt) and prints the table of
benchmarks/compare/issue22-first-fragment-header.md: per revision and round, the default-options
64 KiB stream (16 KiB buffers) and the 64 KiB-buffer stream (one SEND per message either way,
the control), their medians, the defaults/64k ratio per round, and the counters.
   rows.py vm21b.txt"""
import re, statistics, sys

rows = {}  # (rev) -> list of (round, defaults, sends, cplRecv, plain)
order = []
rnd = {}
for line in open(sys.argv[1]):
    m = re.match(r'ROW (\S+) (\S+) trial (\d+) defaults ([\d.]+) MB/s sends/msg ([\d.]+) cplRecv ([\d.]+) \| 64k ([\d.]+)', line)
    if not m:
        if line.startswith('PERFTEST'):
            for r in rnd:
                rnd[r] += 1
        continue
    rev = m.group(1) if m.group(2) == 'event' else m.group(1) + ' ' + m.group(2)  # event, or the mode named
    if rev not in rows:
        rows[rev] = []
        order.append(rev)
        rnd[rev] = 1
    rows[rev].append((rnd[rev], float(m.group(4)), float(m.group(5)), float(m.group(6)), float(m.group(7))))

print('| revision | round | defaults MB/s (3 trials) | 64 KiB buffers MB/s | defaults / 64 KiB buffers (medians) | SENDs per message | receiver completions per message |')
print('|---|---:|---|---|---:|---:|---:|')
for rev in order:
    for r in sorted({x[0] for x in rows[rev]}):
        t = [x for x in rows[rev] if x[0] == r]
        d = [x[1] for x in t]
        p = [x[4] for x in t]
        print(f'| {rev} | {r} | {", ".join(f"{v:.1f}" for v in d)} | {", ".join(f"{v:.1f}" for v in p)} | '
              f'{statistics.median(d) / statistics.median(p):.2f} | {statistics.median(x[2] for x in t):.2f} | {statistics.median(x[3] for x in t):.2f} |')
print()
print('| revision | median defaults MB/s (all trials) | median 64 KiB buffers MB/s | median of the rounds\' ratios |')
print('|---|---:|---:|---:|')
for rev in order:
    d = [x[1] for x in rows[rev]]
    p = [x[4] for x in rows[rev]]
    ratios = []
    for r in sorted({x[0] for x in rows[rev]}):
        t = [x for x in rows[rev] if x[0] == r]
        ratios.append(statistics.median(x[1] for x in t) / statistics.median(x[4] for x in t))
    print(f'| {rev} | {statistics.median(d):.1f} | {statistics.median(p):.1f} | {statistics.median(ratios):.2f} |')
