#!/bin/sh
# guest: ib_send_bw 64 KiB again and again, nothing else running: does the guest speed up within a boot?
pt() {
  port=$1
  ib_send_bw -d rxe0 -x 1 -s 65536 -n 3333 -p $port -F > /tmp/s.$port 2>&1 &
  sleep 1
  echo "$(cut -d' ' -f1 /proc/uptime) s: $(ib_send_bw -d rxe0 -x 1 -s 65536 -n 3333 -p $port -F 10.0.0.1 2>&1 | grep -E '^ *65536')"
  wait
}
p=19300
for i in 1 2 3 4 5 6 7 8 9 10; do p=$((p+1)); pt $p; done
echo "-- idle 90 s"; sleep 90
for i in 1 2 3 4 5; do p=$((p+1)); pt $p; done
