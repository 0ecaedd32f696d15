#!/bin/bash
# Builds each revision named (core and native jars) in a scratch worktree and compiles Pong against them
# into /work/ping/pb/$CLASSES-REV: CLASSES=c for boots 1-3, c3 (Pong with p10, p1 and the statistics) for boots 5-7.
CLASSES=${CLASSES:-c}
set -e
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
cd /work/b-c51e390
for r in "$@"; do
  git checkout -q --detach $r
  nice -n 19 ./mvnw -o -q -B -pl rdma-reactive-native -am package -DskipTests -Dmaven.javadoc.skip=true > /tmp/build-$r.log 2>&1 || { echo "build $r failed"; tail -20 /tmp/build-$r.log; exit 1; }
  mkdir -p /work/ping/pb/jars-$r
  cp rdma-reactive-core/target/rdma-reactive-core-0.1.0-SNAPSHOT.jar rdma-reactive-native/target/rdma-reactive-native-0.1.0-SNAPSHOT.jar /work/ping/pb/jars-$r/
  sed "s#jars-c51e390#jars-$r#g" /work/ping/pb/cp-c51e390.txt > /work/ping/pb/cp-$r.txt
  mkdir -p /work/ping/pb/$CLASSES-$r
  nice -n 19 $JAVA_HOME/bin/javac -nowarn -d /work/ping/pb/$CLASSES-$r -cp $(cat /work/ping/pb/cp-$r.txt) /work/ping/pb/Pong.java
  echo "built $r $(date +%T)"
done
