import re,collections,sys
# every run's median p50 (one way, us) per label over the boots named as arguments (their info.txt); "slow": 76.0 us or more
# usage: runs.py /tmp/vm18 /tmp/vm18b /tmp/vm18c /tmp/vm18d /tmp/vm18e
runs=collections.defaultdict(list)
for b in sys.argv[1:]:
    seen=set()
    for l in open(f'{b}/info.txt'):
        if l in seen: continue
        seen.add(l)
        m=re.match(r'pong (\S+?)(?: spin)? (\d) RESULT median p50 one-way ([\d.]+)',l)
        if m: runs[m.group(1)].append(float(m.group(3)))
order=['old','c51e390','19b94f5','ae42296','db30269','2a997c4','3576d35','c005d2a','dc5f019','86175cf','def3630','22ef9d6','f9cd99b','main','main-crit','v-early','v-both']
print("| revision | runs | runs at 76.0 us or more | median of runs | every run (us, sorted) |\n|---|---:|---:|---:|---|")
for r in order:
    xs=sorted(runs[r])
    print(f"| {r} | {len(xs)} | {sum(1 for x in xs if x>=76)} | {xs[len(xs)//2]:.1f} | "+", ".join(f"{x:.1f}" for x in xs)+" |")
