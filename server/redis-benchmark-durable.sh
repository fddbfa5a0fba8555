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
# per second for each run with the load average, each server's median, and
# the median of the per-round ratios (xstream / Redis, each round's pair).
# N defaults to 20000 under always and 200000 under everysec.
# POLICIES lists the policies to run (default "always everysec"); "off"
# runs both servers without persistence (redis-server --appendonly no,
# xstream-server without -dir, -n N_EVERYSEC), for reference.
# XSTREAM_SERVER names an xstream-server binary; by default it is built
# from this checkout. XSTREAM_BASE, if set, names a second one (another
# version, to compare with), run after it in each round on its own
# directory. Needs redis-server, redis-cli and redis-benchmark.
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
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(load), $(redis-server --version | cut -d' ' -f3), xstream-server $bin${XSTREAM_BASE:+, base $XSTREAM_BASE}"
rp=16379 xp=16380 bp=16381
for policy in ${POLICIES:-always everysec}; do
  n=$NA; [ $policy != always ] && n=$NE
  start() { # binary, port, name
    mkdir -p "$work/$3-$policy"
    if [ $policy = off ]; then
      "$1" -addr 127.0.0.1:$2 2>"$work/$3-$policy.log" &
    else
      "$1" -addr 127.0.0.1:$2 -dir "$work/$3-$policy" -appendfsync $policy 2>"$work/$3-$policy.log" &
    fi
    pids+=($!)
  }
  mkdir -p "$work/redis-$policy"
  aof="--appendonly yes --appendfsync $policy"
  [ $policy = off ] && aof="--appendonly no"
  redis-server --port $rp --bind 127.0.0.1 --dir "$work/redis-$policy" $aof --save '' --daemonize no --logfile "$work/redis-$policy.log" &
  pids+=($!)
  start "$bin" $xp xstream
  ports="$rp $xp"
  if [ -n "${XSTREAM_BASE:-}" ]; then start "$XSTREAM_BASE" $bp base; ports="$ports $bp"; fi
  for p in $ports; do waitport $p; done
  ra=() rb=() rc=() qa=() qc=()
  for i in $(seq "$R"); do
    a=$(rps $rp "$n") b=$(rps $xp "$n") c=
    [ -n "${XSTREAM_BASE:-}" ] && c=$(rps $bp "$n")
    ra+=("$a") rb+=("$b") qa+=("$(echo "$b / $a" | bc -l)")
    [ -n "$c" ] && rc+=("$c") qc+=("$(echo "$c / $a" | bc -l)")
    printf '  %-8s round %d: redis %s xstream %s%s (%.2f) load %s\n' $policy "$i" "$a" "$b" "${c:+ base $c}" "${qa[-1]}" "$(cut -d' ' -f1 /proc/loadavg)"
  done
  med() { printf '%s\n' "$@" | median; }
  printf 'appendfsync %-8s -n %-7s redis median %.0f | xstream median %.0f | median of the per-round ratios %.2f' \
    $policy "$n" "$(med "${ra[@]}")" "$(med "${rb[@]}")" "$(med "${qa[@]}")"
  [ -n "${XSTREAM_BASE:-}" ] && printf ' | base median %.0f, ratio %.2f' "$(med "${rc[@]}")" "$(med "${qc[@]}")"
  echo
  echo "  lengths: $(for p in $ports; do printf '%s ' "$(redis-cli -p $p xlen bench)"; done)"
  redis-cli -p $rp shutdown nosave >/dev/null 2>&1 || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
done
