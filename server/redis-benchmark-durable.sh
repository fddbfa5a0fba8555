#!/usr/bin/env bash
# XADD under redis-benchmark against durable servers, Redis with an AOF and
# xstream-server with -dir, in the same run, interleaved:
#   server/redis-benchmark-durable.sh [ROUNDS] [N_ALWAYS] [N_EVERYSEC]
# For each appendfsync policy (always, then everysec) it starts
# redis-server --appendonly yes --appendfsync P --save '' and
# xstream-server -dir D -appendfsync P, each on a new directory under
# $TMPDIR (the same disk), then runs
#   redis-benchmark -c 50 -n N XADD bench '*' sensor-id 1234 temperature 19.8
# on one, then on the other, ROUNDS times (default 5), and prints requests
# per second for each run and the medians and their ratio (xstream /
# Redis). N defaults to 20000 under always and 200000 under everysec.
# POLICIES lists the policies to run (default "always everysec"); "off"
# runs both servers without persistence (redis-server --appendonly no,
# xstream-server without -dir, -n N_EVERYSEC), for reference.
# XSTREAM_SERVER names an xstream-server binary; by default it is built
# from this checkout. Needs redis-server, redis-cli and redis-benchmark.
set -eu
R=${1:-5} NA=${2:-20000} NE=${3:-200000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
bin=${XSTREAM_SERVER:-}
if [ -z "$bin" ]; then
  bin=$work/xstream-server
  (cd "$here" && go build -o "$bin" ./cmd/xstream-server)
fi
V="sensor-id 1234 temperature 19.8"
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
waitport() {
  for _ in $(seq 100); do redis-cli -p "$1" ping >/dev/null 2>&1 && return; sleep 0.1; done
  echo "port $1 did not come up" >&2; exit 1
}
rps() { # port, n
  redis-benchmark -p "$1" -q -c 50 -n "$2" XADD bench '*' $V 2>/dev/null | tr '\r' '\n' | grep "requests per second" | tail -1 | sed 's/.*: \([0-9.]*\) requests per second.*/\1/'
}
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(redis-server --version | cut -d' ' -f3), xstream-server $bin"
rp=16379 xp=16380
for policy in ${POLICIES:-always everysec}; do
  n=$NA; [ $policy != always ] && n=$NE
  mkdir -p "$work/redis-$policy" "$work/xstream-$policy"
  if [ $policy = off ]; then
    redis-server --port $rp --bind 127.0.0.1 --dir "$work/redis-$policy" --appendonly no --save '' --daemonize no --logfile "$work/redis-$policy.log" &
    pids+=($!)
    "$bin" -addr 127.0.0.1:$xp 2>"$work/xstream-$policy.log" &
    pids+=($!)
  else
    redis-server --port $rp --bind 127.0.0.1 --dir "$work/redis-$policy" --appendonly yes --appendfsync $policy --save '' --daemonize no --logfile "$work/redis-$policy.log" &
    pids+=($!)
    "$bin" -addr 127.0.0.1:$xp -dir "$work/xstream-$policy" -appendfsync $policy 2>"$work/xstream-$policy.log" &
    pids+=($!)
  fi
  waitport $rp; waitport $xp
  ra=() rb=()
  for _ in $(seq "$R"); do
    ra+=("$(rps $rp "$n")")
    rb+=("$(rps $xp "$n")")
  done
  ma=$(printf '%s\n' "${ra[@]}" | median); mb=$(printf '%s\n' "${rb[@]}" | median)
  printf 'appendfsync %-8s -n %-7s redis: %s (median %.0f) | xstream: %s (median %.0f) | ratio %.2f\n' \
    $policy "$n" "${ra[*]}" "$ma" "${rb[*]}" "$mb" "$(echo "$mb / $ma" | bc -l)"
  echo "  lengths: redis $(redis-cli -p $rp xlen bench), xstream $(redis-cli -p $xp xlen bench)"
  redis-cli -p $rp shutdown nosave >/dev/null 2>&1 || true
  kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
  wait 2>/dev/null || true
  pids=()
done
