#!/bin/sh
# guest: system-wide perf profiles of ib_send_bw 64 KiB and of the library's 64 KiB stream (defaults, and 64 KiB buffers), event mode
JH=$1; CP=$2; OUT=$RDMA_VM_OUT
ulimit -l unlimited
echo 0 > /proc/sys/kernel/kptr_restrict 2>/dev/null; echo -1 > /proc/sys/kernel/perf_event_paranoid 2>/dev/null
rep() { perf report -i $1 --no-children --sort comm,dso --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -25; echo; perf report -i $1 --no-children --sort sym --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -45; }
# perftest: 20000 iterations so the window fits inside it
[ "${SKIP_PERFTEST-}" ] || { ib_send_bw -d rxe0 -x 1 -s 65536 -n 20000 -p 19200 -F > /tmp/srv.txt 2>&1 &
sleep 1
ib_send_bw -d rxe0 -x 1 -s 65536 -n 20000 -p 19200 -F 10.0.0.1 > /tmp/cli.txt 2>&1 &
sleep 3
perf record -a -F 499 -o $OUT/perftest.data -- sleep 6 2>/dev/null
wait
grep -E "^ *65536" /tmp/cli.txt | sed 's/^/PERFTEST /'
echo "=== perftest"; rep $OUT/perftest.data; }
for cfg in "16384 64" "65536 32"; do
  set -- $cfg
  rm -f /tmp/go /tmp/go.start
  $JH/bin/java --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp "$CP" io.rdmareactive.benchmarks.Big one event $1 $2 4000 /tmp/go > /tmp/j.txt 2>&1 &
  jp=$!
  while [ ! -f /tmp/go ]; do sleep 0.2; done
  perf record -a -F 499 -o $OUT/lib-$1.data > /dev/null 2>&1 &
  pp=$!
  sleep 10
  touch /tmp/go.start
  wait $jp
  kill -INT $pp; wait $pp
  grep ONE /tmp/j.txt
  echo "=== library $1 x $2"; rep $OUT/lib-$1.data
done
