#!/bin/sh
# guest: ib_send_bw 64 KiB x3, then Big event and busy
JH=$1; CP=$2; COUNT=${3:-1500}; TR=${4:-3}
ulimit -l unlimited
cd /tmp
pt() {
  port=$1
  ib_send_bw -d rxe0 -x 1 -s 65536 -n 3333 -p $port -F > /tmp/s.$port 2>&1 &
  sleep 1
  ib_send_bw -d rxe0 -x 1 -s 65536 -n 3333 -p $port -F 10.0.0.1 2>&1 | grep -E '^ *65536'
  wait
}
J="$JH/bin/java --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -cp $CP"
for p in 19001 19002 19003; do pt $p; done
$J io.rdmareactive.benchmarks.Big event $COUNT $TR
for p in 19004 19005; do pt $p; done
$J io.rdmareactive.benchmarks.Big busy $COUNT $TR
for p in 19006 19007; do pt $p; done
