#!/bin/bash
# Host, in-memory provider: the same Pong harness over library revisions (the transport's Java path without a device).
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
O=/tmp/host-pong; mkdir -p $O; : > $O/info.txt
for p in 1 2; do
  for r in old c51e390 f9cd99b 400f03d 831960f 0ef19c7 main; do
    timeout 300 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -cp /work/ping/pb/c-$r:$(cat /work/ping/pb/cp-$r.txt) \
      Pong in-memory 127.0.0.1 $1 5 20000 > $O/pong-$r-$p.log 2>&1
    echo "pong $r $p $(grep RESULT $O/pong-$r-$p.log) $(grep -m1 -i exception $O/pong-$r-$p.log)" >> $O/info.txt
  done
done
cat $O/info.txt
