#!/bin/sh
# Session 22: the 8 B ping-pong (Pong1, one JVM, both ends) in three loop shapes, against ib_send_lat, alternating:
# spin = threadPerConnection(spin()) (the benchmark's busy-poll rows: two spinning loop threads on a 2-vCPU guest),
# one = busyPoll("one", 1, spin()) (one spinning loop thread serves both ends), event = shared() (the event rows).
J=$1/bin/java
O=$RDMA_VM_OUT
lat() {
  ib_send_lat -n 20000 -s 8 > $O/lat-server-$1.log 2>&1 &
  sleep 2; ib_send_lat -n 20000 -s 8 10.0.0.1 > $O/lat-client-$1.log 2>&1; wait
  echo "ib_send_lat $1 $(grep -A1 't_typical' $O/lat-client-$1.log | tail -1)" >> $O/info.txt
}
pong() { # mode round
  timeout 300 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -cp /work/pong22/c:$(cat /work/pong22/cp.txt) \
    Pong1 native 10.0.0.1 $1 5 10000 > $O/pong-$1-$2.log 2>&1
  echo "pong $1 $2 $(grep RESULT $O/pong-$1-$2.log) $(grep 'p50 one-way' $O/pong-$1-$2.log | awk '{print $6}' | tr '\n' ' ') $(date +%T)" >> $O/info.txt
}
for r in 1 2; do
  lat $r; pong spin $r; pong one $r; pong event $r
done
lat 3
rdma resource show >> $O/info.txt 2>&1
cat $O/info.txt
