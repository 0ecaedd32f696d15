import sys, re, collections
def load(p):
    incl = collections.Counter(); tot = 0
    for b in open(p).read().split('jdk.ExecutionSample'):
        m = re.search(r'stackTrace = \[(.*?)\n\s*\]', b, re.S)
        if not m or 'one-1' not in b: continue
        tot += 1
        fr = set(re.sub(r'\(.*', '', l.strip()) for l in m.group(1).strip().split('\n') if l.strip())
        for f in fr: incl[f] += 1
    return incl, tot
a, ta = load(sys.argv[1]); b, tb = load(sys.argv[2])
print("samples", ta, tb)
keys = set(a) | set(b)
rows = sorted(keys, key=lambda k: -(b[k] - a[k]))
for k in rows[:25]: print(f"{a[k]:6d} {b[k]:6d} {b[k]-a[k]:+6d} {k}")
print('...')
for k in rows[-10:]: print(f"{a[k]:6d} {b[k]:6d} {b[k]-a[k]:+6d} {k}")
