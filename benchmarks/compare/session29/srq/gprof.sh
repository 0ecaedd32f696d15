#!/bin/sh
# Session 29: session 27's gprof.sh with variants: VARS="name:rev:extra-args ..." (',' for ' '), MODE, PASSES.
# Where the guest's CPU goes in an isolated 8 B ping-pong: perf (cpu-clock) over 8 s of trials, system-wide.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
echo 0 > /proc/sys/kernel/kptr_restrict 2>/dev/null; echo -1 > /proc/sys/kernel/perf_event_paranoid 2>/dev/null
for pass in ${PASSES:-1 2}; do for v in $VARS; do
  n=$(echo $v | cut -d: -f1); r=$(echo $v | cut -d: -f2); x=$(echo $v | cut -d: -f3 | tr ',' ' ')
  t=$n-$pass
  $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -XX:+UnlockDiagnosticVMOptions \
    -XX:+DumpPerfMapAtExit -cp $P/o-$r:$(cat $P/cp-$r.txt) Pong1 native 10.0.0.1 ${MODE:-event} 12 30000 $x > $O/pong-$t.log 2>&1 &
  jp=$!
  while ! grep -q "^trial 1 p50" $O/pong-$t.log 2>/dev/null; do sleep 0.5; kill -0 $jp 2>/dev/null || break; done
  perf record -a -F 999 -o /tmp/p-$t.data -- sleep 8 > /dev/null 2>&1
  wait $jp
  echo "pong $t $(grep RESULT $O/pong-$t.log | awk '{print $(NF-1)}') p50s: $(grep -h '^trial .* p50' $O/pong-$t.log | awk '{print $5}' | tr '\n' ' ')" >> $O/info.txt
  perf report -i /tmp/p-$t.data --no-children --sort sym --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -150 > $O/sym-$t.txt
  perf report -i /tmp/p-$t.data --no-children --sort comm,sym --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -150 > $O/commsym-$t.txt
done; done
cat $O/info.txt
