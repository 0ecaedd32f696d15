"""Pools rr.sh's per-JVM medians over boots and compares two revisions per mode: medians, ratio, Mann-Whitney U (two-sided, normal approximation with tie and continuity corrections)."""
import math, statistics as st, sys
import rrtable
def load(files):
    """rrtable.load's figures of every boot, pooled, the crashed JVMs left out."""
    rows = {}
    for f in files:
        for k, v in rrtable.load(f)[0].items():
            rows.setdefault(k, []).extend(x for x in v if x is not None)
    return rows
def mwu(a, b):
    allv = sorted((v, i) for i, v in enumerate(a + b))
    ranks = [0.0] * len(allv); i = 0; ties = 0.0
    while i < len(allv):
        j = i
        while j + 1 < len(allv) and allv[j + 1][0] == allv[i][0]: j += 1
        r = (i + j) / 2 + 1
        for k in range(i, j + 1): ranks[allv[k][1]] = r
        t = j - i + 1; ties += t ** 3 - t; i = j + 1
    n1, n2 = len(a), len(b); r1 = sum(ranks[:n1]); u = r1 - n1 * (n1 + 1) / 2
    mu = n1 * n2 / 2; n = n1 + n2
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    z = max(0.0, abs(u - mu) - 0.5) / sigma  # with the continuity correction, as scipy.stats.mannwhitneyu
    return u, 2 * (1 - 0.5 * (1 + math.erf(abs(z) / math.sqrt(2))))
before, after = sys.argv[1], sys.argv[2]
rows = load(sys.argv[3:])
print(f"| mode | {before} median (JVMs) | {after} median (JVMs) | after/before | fastest JVMs, after/before | Mann-Whitney p |")
print("|---|---:|---:|---:|---:|---:|")
for mode in ('spin', 'event'):
    a, b = rows[(mode, before)], rows[(mode, after)]
    u, p = mwu(a, b)
    print(f"| {mode} | {st.median(a):.2f} ({len(a)}) | {st.median(b):.2f} ({len(b)}) | {st.median(b)/st.median(a):.2f}x | {min(b)/min(a):.2f}x | {p:.2f} |")
