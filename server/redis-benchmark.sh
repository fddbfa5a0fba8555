#!/usr/bin/env bash
# redis-benchmark against servers in the same run, one after the other:
#   server/redis-benchmark.sh REDIS_PORT XSTREAM_PORT
# Each is flushed, filled by the XADD runs (1.1M entries), read by XRANGE,
# then consumed by two groups with XREADGROUP COUNT 10.
set -u
V="sensor-id 1234 temperature 19.8"
for port in "$@"; do
  echo "== port $port: $(redis-cli -p $port info server | grep -E 'redis_version|xstream_server' | tr -d '\r' | tr '\n' ' ')"
  redis-cli -p $port flushall >/dev/null
  redis-benchmark -p $port -q -c 50 -n 1000000 -P 32 XADD bench '*' $V | tr '\r' '\n' | grep -v "^$" | tail -1 | sed 's/^/XADD -P 32: /'
  redis-benchmark -p $port -q -c 50 -n 100000 XADD bench '*' $V | tr '\r' '\n' | grep -v "^$" | tail -1 | sed 's/^/XADD: /'
  redis-benchmark -p $port -q -c 50 -n 1000000 -P 32 XRANGE bench - + COUNT 10 | tr '\r' '\n' | grep -v "^$" | tail -1 | sed 's/^/XRANGE COUNT 10 -P 32: /'
  redis-benchmark -p $port -q -c 50 -n 100000 XRANGE bench - + COUNT 10 | tr '\r' '\n' | grep -v "^$" | tail -1 | sed 's/^/XRANGE COUNT 10: /'
  redis-cli -p $port XGROUP CREATE bench g1 0 >/dev/null
  redis-cli -p $port XGROUP CREATE bench g2 0 >/dev/null
  redis-benchmark -p $port -q -c 50 -n 100000 -P 32 XREADGROUP GROUP g1 c COUNT 10 STREAMS bench '>' | tr '\r' '\n' | grep -v "^$" | tail -1 | sed 's/^/XREADGROUP COUNT 10 -P 32: /'
  redis-benchmark -p $port -q -c 50 -n 100000 XREADGROUP GROUP g2 c COUNT 10 STREAMS bench '>' | tr '\r' '\n' | grep -v "^$" | tail -1 | sed 's/^/XREADGROUP COUNT 10: /'
  echo "pending g1: $(redis-cli -p $port xpending bench g1 | head -1), length: $(redis-cli -p $port xlen bench)"
done
