#!/usr/bin/env python3
"""Java CPU per round trip (us) from a gprof sym file: share x 2 vCPUs x round trip, spin loops excluded; and the top parts."""
import re, sys
def main(sym, rt_us, top=25):
    tot = 0.0; rows = []
    for line in open(sym):
        m = re.match(r'\s*([\d.]+)%\s+\[\.\]\s+(.*)', line)
        if not m: continue
        pct, name = float(m.group(1)), m.group(2)
        if not re.search(r'\b(io\.rdmareactive|java\.|jdk\.|reactor\.|Pong1|sun\.)', name): continue
        if re.search(r'\.spin\(\)', name): continue
        us = pct / 100 * 2 * rt_us
        tot += us; rows.append((us, name[:130]))
    print(f"{sym}: Java CPU per round trip {tot:.2f} us (round trip {rt_us:.2f} us)")
    for us, n in sorted(rows, reverse=True)[:top]:
        print(f"  {us:6.3f}  {n}")
if __name__ == '__main__':
    main(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 25)
