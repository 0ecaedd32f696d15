#!/bin/bash
# host in-memory Pong1 (one busy loop serves both ends): wall us per round trip; per run: min, q1, median trial
cd /work/ping24; J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
for p in $(seq 1 ${PASSES:-1}); do for r in "$@"; do
  timeout 300 ${PIN:+taskset -c $PIN} $J --enable-native-access=ALL-UNNAMED ${JOPT:-} -cp o-$r:$(cat cp-$r.txt) Pong1 in-memory 127.0.0.1 ${MODE:-one} ${TRIALS:-15} ${ITERS:-100000} ${XOPT:-} > /tmp/hw-$r.log 2>&1
  grep -E "^trial.*wall" /tmp/hw-$r.log | sed 's/.*wall \([0-9.]*\).*/\1/' | sort -n | awk -v r=$r '{a[NR]=$1} END {printf "%s min %.2f q1 %.2f median %.2f\n", r, a[1], a[int(NR/4)+1], a[int((NR+1)/2)]}'
done; done
