#!/bin/bash
# host: once QEMU runs, pin its vCPU threads ("CPU n/TCG") one per host core; log its threads
pid=; while [ -z "$pid" ]; do pid=$(pgrep -x qemu-system-x86 | head -1); sleep 0.5; done
sleep 2
for t in /proc/$pid/task/*; do
  c=$(cat $t/comm)
  case $c in "CPU "*"/TCG") n=${c#CPU }; n=${n%%/*}; taskset -p -c $n ${t##*/} >/dev/null; echo "pinned $c (${t##*/}) to $n";; *) echo "thread $c";; esac
done
# As run in session 27: QEMU's threads are unnamed (no -name debug-threads=on), so the two vCPU
# threads were told apart by CPU time (the two busiest during boot) and pinned by hand:
#   taskset -p -c 0 <busiest>; taskset -p -c 1 <second>
