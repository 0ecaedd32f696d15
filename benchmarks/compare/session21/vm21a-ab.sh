#!/bin/sh
JH=$1; CP=$2
ulimit -l unlimited
J="$JH/bin/java --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -cp $CP"
pt() {
  port=$1
  ib_send_bw -d rxe0 -x 1 -s 65536 -n 3333 -p $port -F > /tmp/s.$port 2>&1 &
  sleep 1
  ib_send_bw -d rxe0 -x 1 -s 65536 -n 3333 -p $port -F 10.0.0.1 2>&1 | grep -E '^ *65536'
  wait
}
pt 19001; pt 19002
$J io.rdmareactive.benchmarks.Big ab event 1000 4
pt 19003; pt 19004
$J io.rdmareactive.benchmarks.Big ab busy 1000 2
pt 19005
