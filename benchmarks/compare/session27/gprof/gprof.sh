#!/bin/sh
# Session 27 (MODE, REVS and PASSES from the environment; spin, "old s26" and "1 2" as first run): where the guest's CPU goes in an isolated 8 B busy-poll ping-pong, 19b94f5 (old)
# against HEAD's code (s26): Pong1 native spin, perf (cpu-clock, the guest has no PMU) over 8 s of
# trials, system-wide, by symbol (JIT'd methods through the JVM's perf map) and by dso.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
echo 0 > /proc/sys/kernel/kptr_restrict 2>/dev/null; echo -1 > /proc/sys/kernel/perf_event_paranoid 2>/dev/null
for pass in ${PASSES:-1 2}; do for r in ${REVS:-old s26}; do
  t=$r-$pass
  $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -XX:+UnlockDiagnosticVMOptions \
    -XX:+DumpPerfMapAtExit -cp $P/o-$r:$(cat $P/cp-$r.txt) Pong1 native 10.0.0.1 ${MODE:-spin} 12 30000 > $O/pong-$t.log 2>&1 &
  jp=$!
  while ! grep -q "^trial 1 p50" $O/pong-$t.log 2>/dev/null; do sleep 0.5; kill -0 $jp 2>/dev/null || break; done
  perf record -a -F 999 -o /tmp/p-$t.data -- sleep 8 > /dev/null 2>&1
  wait $jp
  echo "pong $t $(grep RESULT $O/pong-$t.log | awk '{print $(NF-1)}') p50s: $(grep -h '^trial .* p50' $O/pong-$t.log | awk '{print $5}' | tr '\n' ' ')" >> $O/info.txt
  perf report -i /tmp/p-$t.data --no-children --sort comm,dso --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -30 > $O/dso-$t.txt
  perf report -i /tmp/p-$t.data --no-children --sort sym --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -120 > $O/sym-$t.txt
  perf report -i /tmp/p-$t.data --no-children --sort comm,sym --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -150 > $O/commsym-$t.txt
done; done
cat $O/info.txt
