"""work.py PROF... : per run, the loop threads' itimer samples (1 ms of CPU each) split into the
verbs calls that post (post_send, a write() on rxe), the rest of the connection's drain (the
library's user-space work per message), and everything else (polling an empty CQ, spinning,
sleeping); then, over all runs given, the drain's samples by the innermost library method."""
import collections, re, sys

def frames(line):
    st, n = line.rstrip().rsplit(' ', 1)
    return [re.sub(r'_\[[a-z0-9]\]$', '', x) for x in st.split(';')], int(n)

byMethod = collections.Counter()
print('| run | loop samples | post (verbs call) | rest of the drain | other |')
print('|---|---:|---:|---:|---:|')
for f in sys.argv[1:]:
    cat = collections.Counter()
    for line in open(f):
        fr, n = frames(line)
        if not fr[0].startswith('[rdma-loop'):
            continue
        s = ';'.join(fr)
        if not any(k in s for k in ('onCompletions', 'ConnectionOperations.drain', 'ConnectionDrain.drain')):
            cat['other'] += n
            continue
        inner = next((x for x in reversed(fr) if 'io/rdmareactive' in x), '?')
        native_leaf = not any(k in fr[-1] for k in ('io/rdmareactive', 'java', 'reactor', 'Pong1', 'jdk'))
        if native_leaf and re.search(r'(Ibverbs|InlineVerbs)\.(post|postSend)$', inner):
            cat['post'] += n
        else:
            cat['drain'] += n
            byMethod[(f.split('/')[-1].split('-')[1], inner.split('/')[-1] + (' > native' if native_leaf else ''))] += n
    tot = sum(cat.values())
    print(f"| {f.split('/')[-1]} | {tot} | {cat['post']} | {cat['drain']} | {cat['other']} |")
runs = collections.Counter(f.split('/')[-1].split('-')[1] for f in sys.argv[1:])
names = sorted(runs)
print()
print('| innermost library method (drain only, all runs) | ' + ' | '.join(names) + ' |')
print('|---|' + '---:|' * len(names))
keys = collections.Counter()
for (r, k), v in byMethod.items():
    keys[k] += v
for k, _ in keys.most_common(30):
    print(f'| `{k}` | ' + ' | '.join(str(byMethod[(r, k)]) for r in names) + ' |')
