#!/bin/sh
# Session 28: does C2's inlining budget set the isolated round trip? Pong1 native busy-poll, 19b94f5 (old) and 772e6f5
# (lone), each with the default inlining limits (def) and with larger ones (jit), ABBA over PASSES passes.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
JIT="-XX:FreqInlineSize=700 -XX:MaxInlineSize=100 -XX:InlineSmallCode=6000"
pong() { # rev variant tag
  opts=""; [ $2 = jit ] && opts=$JIT
  timeout 300 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 $opts \
    -cp $P/o-$1:$(cat $P/cp-$1.txt) Pong1 native 10.0.0.1 spin 5 10000 > $O/pong-$3.log 2>&1
  echo "pong $1 $2 $3 $(grep RESULT $O/pong-$3.log | awk '{print $(NF-1)}') p50s: $(grep -h '^trial . p50' $O/pong-$3.log | awk '{print $5}' | tr '\n' ' ')" >> $O/info.txt
}
for p in $(seq 1 ${PASSES:-4}); do
  date +"pass $p %T" >> $O/info.txt
  if [ $((p % 2)) = 1 ]; then order="lone:def lone:jit old:def old:jit"; else order="old:jit old:def lone:jit lone:def"; fi
  for x in $order; do r=${x%%:*}; v=${x##*:}; pong $r $v $r-$v-$p; done
done
cat $O/info.txt
