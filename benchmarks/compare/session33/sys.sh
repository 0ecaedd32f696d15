#!/bin/sh
# Session 33: syscalls and context switches per round trip of an isolated 8 B event-mode ping-pong, per variant.
# VARS="name:rev:extra-args ..." (',' for ' ')
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/s30/p
ulimit -l unlimited
echo -1 > /proc/sys/kernel/perf_event_paranoid 2>/dev/null
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
for pass in ${PASSES:-1 2}; do for v in $VARS; do
  n=$(echo $v | cut -d: -f1); r=$(echo $v | cut -d: -f2); x=$(echo $v | cut -d: -f3 | tr ',' ' ')
  t=$n-$pass
  $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 \
    -cp $P/o-$r:$(cat $P/cp-$r.txt) Pong1 native 10.0.0.1 ${MODE:-event} ${TRIALS:-40} 10000 $x > $O/pong-$t.log 2>&1 &
  jp=$!
  while ! grep -q "^trial 1 p50" $O/pong-$t.log 2>/dev/null; do sleep 0.5; kill -0 $jp 2>/dev/null || break; done
  a=$(grep -c "^trial .* p50" $O/pong-$t.log)
  perf trace -s -p $jp -o $O/trace-$t.txt -- sleep 6 > /dev/null 2>&1
  b=$(grep -c "^trial .* p50" $O/pong-$t.log)
  perf stat -e 'sched:sched_switch,sched:sched_wakeup,irq:softirq_entry,raw_syscalls:sys_enter' -a -o $O/stat-$t.txt -- sleep 6 > /dev/null 2>&1
  c=$(grep -c "^trial .* p50" $O/pong-$t.log)
  wait $jp
  echo "pong $t trials $a..$b..$c $(grep RESULT $O/pong-$t.log | awk '{print $(NF-1)}') p50s: $(grep -h '^trial .* p50' $O/pong-$t.log | awk '{print $5}' | tr '\n' ' ')" >> $O/info.txt
  grep "wall" $O/pong-$t.log | awk '{print $NF, $(NF-1)}' | tr -d ')' | tr '\n' ' ' >> $O/info.txt; echo >> $O/info.txt
done; done
cat $O/info.txt
