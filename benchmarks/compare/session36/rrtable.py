"""Per-JVM one-way medians from rr.sh's info.txt files (one per boot): median, range and crashes per revision and mode."""
import statistics as st, sys


def load(f):
    """{(mode, revision): [per-JVM one-way median, or None for a JVM that crashed]} and the ib_send_lat typical figures of one info.txt."""
    rows, lat = {}, []
    for line in open(f):
        p = line.split()
        if not p: continue
        if p[0] == 'pong':
            try: v = float(p[4])
            except (ValueError, IndexError): v = None
            rows.setdefault((p[2], p[1]), []).append(v)
        elif p[0] == 'ib_send_lat':
            lat.append(float(p[5]))
    return rows, lat


if __name__ == '__main__':
    for f in sys.argv[1:]:
        rows, lat = load(f)
        print(f"\n{f}: ib_send_lat typical {', '.join('%.2f' % x for x in lat)} us\n")
        print("| mode | revision | JVMs | one-way medians per JVM, us (sorted) | median | crashed |")
        print("|---|---|---:|---|---:|---:|")
        for (mode, rev), v in sorted(rows.items()):
            ok = sorted(x for x in v if x is not None)
            print(f"| {mode} | {rev} | {len(ok)} | {' '.join('%.2f' % x for x in ok)} | {st.median(ok):.2f} | {v.count(None)} |")
