#!/bin/sh
# Pong1 native spin at 87421fe, 6 JVMs; markers for the host-side QEMU 'info jit' sampler
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
for i in 1 2 3 4 5 6; do
  touch $O/m-$i-a-start
  $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 \
    -cp $P/o-s26:$(cat $P/cp-s26.txt) Pong1 native 10.0.0.1 spin 5 10000 > $O/pong-$i.log 2>&1 &
  pid=$!
  while kill -0 $pid 2>/dev/null; do
    if grep -q "^warmed" $O/pong-$i.log 2>/dev/null && [ ! -f $O/m-$i-b-trials ]; then touch $O/m-$i-b-trials; fi
    sleep 1
  done
  touch $O/m-$i-c-end
  echo "run $i $(grep RESULT $O/pong-$i.log) p50s: $(grep -h '^trial . p50' $O/pong-$i.log | awk '{print $5}' | tr '\n' ' ')" >> $O/info.txt
done
touch $O/done
cat $O/info.txt
