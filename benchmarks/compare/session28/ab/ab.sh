#!/bin/sh
# Session 28's within-JVM A/B boots (PongAB: trials alternate a static flag ABBA, so the JVM's latency mode applies to
# both sides). Usage, in the guest: ab.sh JAVA_HOME BUILD RUN... with RUN = tag:mode:class:field[:jvm-options], BUILD
# the measurement build's classes (o-BUILD) and classpath (cp-BUILD.txt) under /work/ping24. boots.txt lists each
# boot's runs. (The boots ran one script each, ab1.sh to ab5.sh, with these lines inline; they are folded into this one.)
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
B=$2
shift 2
ulimit -l unlimited
for run in "$@"; do
  t=$(echo "$run" | cut -d: -f1) m=$(echo "$run" | cut -d: -f2) c=$(echo "$run" | cut -d: -f3) f=$(echo "$run" | cut -d: -f4)
  x=$(echo "$run" | cut -d: -f5- | tr ':' ' ')
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -Dab.class=$c -Dab.field=$f $x \
    -cp $P/o-$B:$(cat $P/cp-$B.txt) PongAB native 10.0.0.1 $m 12 10000 > $O/ab-$t.log 2>&1
  echo "$t $m $f $(grep RESULT $O/ab-$t.log) | $(grep -h '^trial .* p50' $O/ab-$t.log | awk '{print $3 $6}' | tr '\n' ' ')" >> $O/info.txt
done
cat $O/info.txt
