#!/bin/sh
# Session 23: RSocket request-stream over rxe0 under JFR (profile settings), one JVM per case.
J=$1/bin/java
O=$RDMA_VM_OUT
ulimit -l unlimited
run() { # name size count rounds mode
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation \
    -XX:StartFlightRecording=filename=$O/$1.jfr,settings=profile -cp /work/rs23/c:$(cat /work/rs23/cp.txt) \
    io.rdmareactive.benchmarks.RStream 10.0.0.1 native $2 $3 $4 $5 > $O/$1.log 2>&1
  echo "$1 $(grep ROUND $O/$1.log | tail -n +2 | awk '{print $5}' | tr '\n' ' ') $(date +%T)" >> $O/info.txt
}
bw() {
  ib_send_bw -s $1 -n 3000 > $O/bw-s-$1.log 2>&1 &
  sleep 2; ib_send_bw -s $1 -n 3000 10.0.0.1 > $O/bw-c-$1.log 2>&1; wait
  echo "ib_send_bw $1 $(grep -A1 'BW average' $O/bw-c-$1.log | tail -1)" >> $O/info.txt
}
bw 4096
run rs4k-plain 4096 20000 4 plain
bw 65536
run rs64k-plain 65536 1500 4 plain
run rs64k-reg 65536 1500 4 registered
bw 65536
rdma resource show >> $O/info.txt 2>&1
cat $O/info.txt
