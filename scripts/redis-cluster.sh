#!/usr/bin/env bash
# A three-master Redis Cluster on loopback for development and tests (no replicas), from Debian's
# redis-server. Data, logs and pid files under $DATA_DIR/redis-cluster-<BASE>/ (./.data by default).
#
#   scripts/redis-cluster.sh start [BASE]    start the masters on BASE..BASE+2 (default 7000), create
#                                            the cluster on first start, wait for cluster_state:ok
#   scripts/redis-cluster.sh stop [BASE]     stop the three masters (the cluster survives in nodes.conf)
#   scripts/redis-cluster.sh status [BASE]   exit 0 = every master up and cluster_state:ok, 3 = not
#
# The test setup runs one cluster per SVC_TEST_SLOT on base 7000 + 10 * slot (a cluster has only
# database 0, so parallel runs cannot share one). Environment: DATA_DIR, STACK_TIMEOUT (60 s).
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd -- "$SCRIPT_DIR/.." && pwd -P)

# shellcheck source=scripts/processHelpers.sh
source "$SCRIPT_DIR/processHelpers.sh"
DATA=$(data_dir "$ROOT")

HOST=127.0.0.1
TIMEOUT=${STACK_TIMEOUT:-60}
MASTERS=3

log() { printf 'redis-cluster: %s\n' "$*"; }
err() { printf 'redis-cluster: ERROR: %s\n' "$*" >&2; }
die() { err "$@"; exit 1; }

# Same policy as scripts/stack.sh: install redis-server only as root, without starting Debian's service.
ensure_redis() {
  { command -v redis-server && command -v redis-cli; } >/dev/null 2>&1 && return 0
  [[ $(id -u) -eq 0 ]] || die "missing Debian package redis-server. Run as root once, or: sudo apt-get install -y redis-server"
  command -v apt-get >/dev/null 2>&1 || die "missing redis-server and no apt-get on this machine"
  mkdir -p "$DATA"
  local policy=/usr/sbin/policy-rc.d made_policy=0 rc=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    made_policy=1
  fi
  log "installing redis-server with apt-get (log: $DATA/apt.log) ..."
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends redis-server </dev/null; } \
    >>"$DATA/apt.log" 2>&1 || rc=$?
  (( made_policy )) && rm -f "$policy"
  (( rc == 0 )) || { show_log "$DATA/apt.log"; die "apt-get failed (exit $rc) installing redis-server"; }
  hash -r
}

# ---------------------------------------------------------------- one cluster

BASE=7000
DIR=
set_base() {
  BASE=${1:-7000}
  [[ $BASE =~ ^[0-9]+$ ]] && (( BASE >= 1024 && BASE + MASTERS - 1 <= 65535 )) || die "BASE must be a port number, got '$BASE'"
  # Redis Cluster's bus listens on port + 10000.
  (( BASE + 10000 + MASTERS - 1 <= 65535 )) || die "BASE must leave room for the cluster bus (port + 10000)"
  DIR=$DATA/redis-cluster-$BASE
}

ports() { local i; for ((i = 0; i < MASTERS; i++)); do echo $((BASE + i)); done; }
node_dir() { echo "$DIR/$1"; }
node_pid() { echo "$DIR/$1/redis.pid"; }
node_log() { echo "$DIR/$1/redis.log"; }
cli() { local port=$1; shift; redis-cli -h "$HOST" -p "$port" "$@"; }
node_running() { pid_is "$(read_pid "$(node_pid "$1")")" "redis-server.*:$1"; }
node_ping() { [[ $(cli "$1" ping 2>/dev/null) == PONG ]]; }

# A field of CLUSTER INFO on one node (empty when the node does not answer).
cluster_info() { cli "$1" cluster info 2>/dev/null | tr -d '\r' | sed -n "s/^$2://p"; }

cluster_ok() {
  local port
  for port in $(ports); do [[ $(cluster_info "$port" cluster_state) == ok ]] || return 1; done
}

take_lock() {
  mkdir -p "$DIR"
  exec 9>"$DIR/.lock"
  flock -w 300 9 || die "another redis-cluster.sh holds $DIR/.lock for 5 minutes"
}

start_node() {
  local port=$1 i
  if node_running "$port"; then
    for ((i = 0; i < TIMEOUT * 10; i++)); do node_ping "$port" && return 0; sleep 0.1; done
    die "node $port (pid $(read_pid "$(node_pid "$port")")) runs but does not answer; run 'scripts/redis-cluster.sh stop $BASE' first"
  fi
  if port_open "$port" || port_open $((port + 10000)); then
    die "port $HOST:$port or its cluster bus $((port + 10000)) is taken by another process; pick another base, e.g. scripts/redis-cluster.sh start $((BASE + 100))"
  fi
  local dir pid_file log_file
  dir=$(node_dir "$port") pid_file=$(node_pid "$port") log_file=$(node_log "$port")
  mkdir -p "$dir"
  rm -f "$pid_file"
  # The same persistence choices as the single Redis of scripts/stack.sh (see the comment there);
  # nodes.conf keeps the cluster's shape across restarts. A short node timeout lets a stopped
  # master be noticed within seconds in fault tests.
  if ! redis-server --bind "$HOST" --port "$port" --dir "$dir" \
    --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000 \
    --lazyfree-lazy-expire yes --appendonly yes --save "" --rdbcompression no \
    --daemonize yes --pidfile "$pid_file" --logfile "$log_file" </dev/null >>"$log_file" 2>&1 9>&-; then
    show_log "$log_file"
    die "node $port: redis-server failed to start"
  fi
  for ((i = 0; i < TIMEOUT * 10; i++)); do node_ping "$port" && return 0; sleep 0.1; done
  show_log "$log_file"
  die "node $port: no PONG within ${TIMEOUT}s"
}

all_running() {
  local port
  for port in $(ports); do node_running "$port" || return 1; done
}

# Fresh nodes know only themselves and own no slot: only then is the cluster created, so a
# restart never re-creates (and never wipes) a cluster that nodes.conf already describes.
all_fresh() {
  local port
  for port in $(ports); do
    [[ $(cluster_info "$port" cluster_known_nodes) == 1 && $(cluster_info "$port" cluster_slots_assigned) == 0 ]] || return 1
  done
}

cmd_start() {
  ensure_redis
  take_lock
  local port i
  if all_running && cluster_ok; then
    log "already running on $HOST:$BASE-$((BASE + MASTERS - 1))"
    return 0
  fi
  log "starting $MASTERS masters on $HOST:$BASE-$((BASE + MASTERS - 1)) (data $DIR)"
  for port in $(ports); do start_node "$port"; done
  if all_fresh; then
    local nodes=()
    for port in $(ports); do nodes+=("$HOST:$port"); done
    log "creating the cluster"
    if ! redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$DIR/create.log" 2>&1 9>&-; then
      show_log "$DIR/create.log"
      die "redis-cli --cluster create failed"
    fi
  fi
  for ((i = 0; i < TIMEOUT * 10; i++)); do
    if cluster_ok; then
      log "ready on $HOST:$BASE-$((BASE + MASTERS - 1))"
      return 0
    fi
    sleep 0.1
  done
  for port in $(ports); do err "node $port: cluster_state $(cluster_info "$port" cluster_state), known nodes $(cluster_info "$port" cluster_known_nodes), slots $(cluster_info "$port" cluster_slots_assigned)"; done
  die "no cluster_state:ok on every node within ${TIMEOUT}s; if the nodes disagree, 'scripts/redis-cluster.sh stop $BASE', remove $DIR and start again"
}

cmd_stop() {
  take_lock
  local port pid any=0
  for port in $(ports); do
    pid=$(read_pid "$(node_pid "$port")")
    if ! pid_is "$pid" redis-server; then
      rm -f "$(node_pid "$port")"
      continue
    fi
    any=1
    # SIGTERM = graceful SHUTDOWN of our own pid (never whatever else holds the port).
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_gone "$pid" "$TIMEOUT"; then
      err "node $port still running after ${TIMEOUT}s, killing pid $pid"
      kill -KILL "$pid" 2>/dev/null || true
      wait_gone "$pid" 5 || true
    fi
    rm -f "$(node_pid "$port")"
  done
  if (( any )); then log "stopped $HOST:$BASE-$((BASE + MASTERS - 1))"; else log "not running ($HOST:$BASE-$((BASE + MASTERS - 1)))"; fi
}

cmd_status() {
  local port up=0
  for port in $(ports); do node_running "$port" && node_ping "$port" && up=$((up + 1)); done
  if (( up == MASTERS )) && cluster_ok; then
    echo "redis-cluster up    $HOST:$BASE-$((BASE + MASTERS - 1))  ($MASTERS masters, data $DIR)"
  elif (( up > 0 )); then
    echo "redis-cluster down  ($up of $MASTERS masters up on $HOST:$BASE-$((BASE + MASTERS - 1)), cluster_state $(cluster_info "$BASE" cluster_state))"
    return 3
  else
    echo "redis-cluster down  ($HOST:$BASE-$((BASE + MASTERS - 1)))"
    return 3
  fi
}

main() {
  local cmd=${1:-}
  case $cmd in
    start) set_base "${2:-}"; cmd_start ;;
    stop) set_base "${2:-}"; cmd_stop ;;
    status) set_base "${2:-}"; cmd_status ;;
    -h | --help | help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
    *)
      sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
      exit 2
      ;;
  esac
}

main "$@"
