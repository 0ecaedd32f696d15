#!/bin/bash
# builds core (and native if NATIVE=1) from /work/main's working tree into /work/ping/pb/jars-$1, compiles Pong1 and Pong into o-$1 and c3-$1
set -e
N=$1; export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
cd /work/main
./mvnw -o -q -B -pl rdma-reactive-core${NATIVE:+,rdma-reactive-native} package -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true -Dcheckstyle.skip -Dspotless.check.skip=true > /tmp/bx-$N.log 2>&1 || { tail -30 /tmp/bx-$N.log; exit 1; }
mkdir -p /work/ping/pb/jars-$N
cp rdma-reactive-core/target/rdma-reactive-core-0.1.0-SNAPSHOT.jar /work/ping/pb/jars-$N/
if [ -n "$NATIVE" ]; then cp rdma-reactive-native/target/rdma-reactive-native-0.1.0-SNAPSHOT.jar /work/ping/pb/jars-$N/; else cp /work/ping/pb/jars-b2931f4/rdma-reactive-native-0.1.0-SNAPSHOT.jar /work/ping/pb/jars-$N/; fi
sed "s#jars-c51e390#jars-$N#g" /work/ping/pb/cp-c51e390.txt > /work/ping/pb/cp-$N.txt
mkdir -p /work/ping/pb/o-$N /work/ping/pb/c3-$N
$JAVA_HOME/bin/javac -nowarn -d /work/ping/pb/o-$N -cp $(cat /work/ping/pb/cp-$N.txt) /work/ping/pb/one/Pong1.java
$JAVA_HOME/bin/javac -nowarn -d /work/ping/pb/c3-$N -cp $(cat /work/ping/pb/cp-$N.txt) /work/ping/pb/Pong.java
echo "built $N $(date +%T)"
