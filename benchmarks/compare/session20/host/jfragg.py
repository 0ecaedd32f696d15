import sys, re, collections
# reads `jfr print --events jdk.ExecutionSample` text; prints top-frame (self) and inclusive counts for one thread
thread = sys.argv[2] if len(sys.argv) > 2 else None
self_c = collections.Counter(); incl = collections.Counter(); total = 0
block = []; tname = None
def flush():
    global total
    if not block: return
    if thread and tname and thread not in tname: return
    total += 1
    frames = [re.sub(r'\s+line:.*', '', f).strip() for f in block]
    frames = [re.sub(r'\(.*\)', '', f) for f in frames]
    self_c[frames[0]] += 1
    for f in set(frames): incl[f] += 1
cur = None
for line in open(sys.argv[1]):
    s = line.rstrip('\n')
    if s.startswith('jdk.ExecutionSample'):
        flush(); block = []; tname = None; cur = None
    elif 'sampledThread' in s:
        m = re.search(r'"([^"]+)"', s); tname = m.group(1) if m else None
    elif 'stackTrace = [' in s:
        cur = True
    elif cur and s.strip() == ']':
        cur = False
    elif cur and s.strip() and not s.strip().startswith('...'):
        block.append(s.strip())
flush()
print("samples", total)
print("-- self")
for k, v in self_c.most_common(int(sys.argv[3]) if len(sys.argv) > 3 else 30): print(f"{100.0*v/total:5.1f}% {k}")
print("-- inclusive (rdmareactive)")
for k, v in incl.most_common(400):
    if 'rdmareactive' in k and v * 100 >= total: print(f"{100.0*v/total:5.1f}% {k}")
