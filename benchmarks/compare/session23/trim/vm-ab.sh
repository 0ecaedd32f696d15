#!/bin/sh
# Session 23: RSocket request-stream over rxe0, da0724c (base) against the periodic trim (new), alternating in one boot.
J=$1/bin/java
O=$RDMA_VM_OUT
ulimit -l unlimited
run() { # which size count rounds mode r
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -cp /work/rs23/c$1:$(cat /work/rs23/cp-$1.txt) \
    io.rdmareactive.benchmarks.RStream 10.0.0.1 native $2 $3 $4 $5 > $O/$1-$2-$5-$6.log 2>&1
  echo "$1 $2 $5 $6 $(grep ROUND $O/$1-$2-$5-$6.log | tail -n +3 | awk '{print $6}' | tr '\n' ' ') $(date +%T)" >> $O/info.txt
}
bw() {
  ib_send_bw -s $1 -n 3000 > $O/bw-s-$1-$2.log 2>&1 &
  sleep 2; ib_send_bw -s $1 -n 3000 10.0.0.1 > $O/bw-c-$1-$2.log 2>&1; wait
  echo "ib_send_bw $1 $2 $(grep -A1 'BW average' $O/bw-c-$1-$2.log | tail -1)" >> $O/info.txt
}
for r in 1 2 3; do
  bw 4096 $r; bw 65536 $r
  if [ $((r % 2)) = 1 ]; then a=base; b=new; else a=new; b=base; fi
  run $a 4096 20000 6 plain $r; run $b 4096 20000 6 plain $r
  run $a 65536 1500 6 plain $r; run $b 65536 1500 6 plain $r
done
bw 4096 4; bw 65536 4
rdma resource show >> $O/info.txt 2>&1
cat $O/info.txt
