#!/bin/sh
# Session 29: do a JVM's latency mode shifts coincide with compilations or deoptimizations? Pong1 native,
# long runs (many trials), with PrintCompilation and deoptimization logging interleaved with the trial lines.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
for i in $(seq 1 ${RUNS:-4}); do for m in ${MODES:-spin}; do
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -XX:+PrintCompilation \
    -Xlog:deoptimization=debug:stdout:uptime -cp $P/o-${REV:-shp}:$(cat $P/cp-${REV:-shp}.txt) Pong1 native 10.0.0.1 $m ${TRIALS:-16} 10000 > $O/jm-$m-$i.log 2>&1
  echo "jm $m $i $(grep -a RESULT $O/jm-$m-$i.log) p50s: $(grep -ah '^trial .* p50' $O/jm-$m-$i.log | awk '{print $5}' | tr '\n' ' ')" >> $O/info.txt
done; done
cat $O/info.txt
