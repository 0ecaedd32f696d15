#!/bin/sh
# Session 27: clock reads (clock_gettime system calls: the guest's hpet clocksource has no vDSO
# path) per doorbell write(), per thread, for Pong1 spin and event: old (19b94f5), s26 (HEAD), ck.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
echo -1 > /proc/sys/kernel/perf_event_paranoid 2>/dev/null
for cfg in "old spin" "s26 spin" "ck spin" "old event" "s26 event" "ck event"; do
  set -- $cfg; t=$1-$2
  $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 \
    -cp $P/o-$1:$(cat $P/cp-$1.txt) Pong1 native 10.0.0.1 $2 12 30000 > $O/pong-$t.log 2>&1 &
  jp=$!
  while ! grep -q "^trial 1 p50" $O/pong-$t.log 2>/dev/null; do sleep 0.5; kill -0 $jp 2>/dev/null || break; done
  perf stat --per-thread -e syscalls:sys_enter_clock_gettime,syscalls:sys_enter_write,syscalls:sys_enter_futex -p $jp -o $O/stat-$t.txt -- sleep 5
  wait $jp
  echo "pong $t $(grep RESULT $O/pong-$t.log | awk '{print $(NF-1)}')" >> $O/info.txt
  grep -E "rdma|java|main" $O/stat-$t.txt | awk '$2 > 0' >> $O/info.txt
done
cat $O/info.txt
