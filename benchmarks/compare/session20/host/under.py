import sys, re, collections
# samples whose stack contains argv[2]: their top frames (with line), and the frames directly called from it
f = open(sys.argv[1]).read().split('jdk.ExecutionSample')
X = sys.argv[2]; tops = collections.Counter(); calls = collections.Counter(); n = 0; tot = 0
for b in f:
    m = re.search(r'stackTrace = \[(.*?)\n\s*\]', b, re.S)
    if not m: continue
    tot += 1
    fr = [re.sub(r'\s+bci.*', '', l.strip()) for l in m.group(1).strip().split('\n') if l.strip() and not l.strip().startswith('...')]
    idx = [i for i, l in enumerate(fr) if X in l]
    if not idx: continue
    n += 1
    i = idx[-1]
    tops[fr[0]] += 1
    if i > 0: calls[fr[i-1]] += 1
    else: calls['(self) ' + fr[0]] += 1
print(f"{X}: {n} of {tot} samples ({100*n/tot:.1f}%)")
print("-- called from it"); [print(f"{100*v/tot:5.1f}% {k}") for k, v in calls.most_common(15)]
print("-- top frames"); [print(f"{100*v/tot:5.1f}% {k}") for k, v in tops.most_common(15)]
