#!/bin/sh
# Session 28: the guest's cost of a plain add, a monitor, a CAS, a volatile write and a clock read; then gprof (REVS, PASSES).
J=$1/bin/java
O=$RDMA_VM_OUT
$J -XX:-TieredCompilation -cp /work/ping24/vm28 Costs > $O/costs.txt 2>&1
cat $O/costs.txt >> $O/info.txt
cat /sys/devices/system/clocksource/clocksource0/current_clocksource >> $O/info.txt
sh /work/main/benchmarks/compare/session27/gprof/gprof.sh $1
