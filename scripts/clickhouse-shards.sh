#!/usr/bin/env bash
# Two extra local ClickHouse 18.16 servers: the two shards of a cluster, to try and test
# CLICKHOUSE_CLUSTER (README "ClickHouse cluster"). Independent of scripts/stack.sh's server.
#
#   scripts/clickhouse-shards.sh start    install clickhouse-server if missing, start the shards not running
#   scripts/clickhouse-shards.sh stop     stop both shards
#   scripts/clickhouse-shards.sh status   show them (exit 0 = both up, 3 = some down)
#   scripts/clickhouse-shards.sh env      print the CLICKHOUSE_URL / CLICKHOUSE_CLUSTER export lines
#
# Shard N (1 and 2) listens on 127.0.0.(N+1) only: HTTP on CLICKHOUSE_SHARD_HTTP_PORT (18123, the
# same on both, as on a real cluster of one server per machine: the migration runner reaches each
# shard at its system.clusters host and the port of CLICKHOUSE_URL), native protocol on
# CLICKHOUSE_SHARD_TCP_BASE + N (19001, 19002; they must differ, see clickhouse/remote-servers.xml).
# Data under ${DATA_DIR:-./.data}/clickhouse-shard-N/. Both servers define the cluster
# CLICKHOUSE_SHARDS_CLUSTER (svc_shards) of the two. STACK_TIMEOUT: readiness timeout (60 s).
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd -- "$SCRIPT_DIR/.." && pwd -P)

data_dir_in=${DATA_DIR:-./.data}
case $data_dir_in in
  /*) DATA=$(realpath -m -- "$data_dir_in") ;;
  *) DATA=$(realpath -m -- "$ROOT/$data_dir_in") ;;
esac

CLUSTER=${CLICKHOUSE_SHARDS_CLUSTER:-svc_shards}
HTTP_PORT=${CLICKHOUSE_SHARD_HTTP_PORT:-18123}
TCP_BASE=${CLICKHOUSE_SHARD_TCP_BASE:-19000}
TIMEOUT=${STACK_TIMEOUT:-60}
TEMPLATES=$SCRIPT_DIR/clickhouse
SHARDS=(1 2)

log() { printf 'clickhouse-shards: %s\n' "$*"; }
err() { printf 'clickhouse-shards: ERROR: %s\n' "$*" >&2; }
die() { err "$@"; exit 1; }

[[ $CLUSTER =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "CLICKHOUSE_SHARDS_CLUSTER must be a plain name, got '$CLUSTER'"

shard_host() { echo "127.0.0.$(($1 + 1))"; }
shard_tcp() { echo $((TCP_BASE + $1)); }
shard_dir() { echo "$DATA/clickhouse-shard-$1"; }
shard_conf() { echo "$(shard_dir "$1")/etc/config.xml"; }
shard_pidfile() { echo "$(shard_dir "$1")/clickhouse-server.pid"; }

read_pid() { if [[ -s $1 ]]; then head -n1 "$1" | tr -dc 0-9; fi; }

# pid is alive and its command line mentions $2 (our config file: never another server).
pid_is() {
  local pid=$1 what=$2
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$what"
}

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

http_get() {
  local url="http://$1:$HTTP_PORT$2"
  if command -v curl >/dev/null 2>&1; then
    curl -fsS --max-time 5 "$url" 2>/dev/null
  else
    node -e 'fetch(process.argv[1],{signal:AbortSignal.timeout(5000)}).then(async r=>{if(!r.ok)process.exit(1);process.stdout.write(await r.text())}).catch(()=>process.exit(1))' "$url"
  fi
}

shard_running() { pid_is "$(read_pid "$(shard_pidfile "$1")")" "$(shard_conf "$1")"; }
shard_ping() { [[ $(http_get "$(shard_host "$1")" /ping 2>/dev/null) == Ok.* ]]; }

show_log() {
  if [[ -s $1 ]]; then
    err "---- last lines of $1 ----"
    tail -n 40 "$1" >&2
  fi
}

# Render template $1 to $2 for shard $3: @@KEY@@ placeholders. Written only when the text
# changes (ClickHouse watches its config files and reloads them).
render() {
  local src=$1 dst=$2 n=$3 text
  [[ -f $src ]] || die "template $src is missing"
  text=$(<"$src")
  text=${text//@@CH_DIR@@/"$(shard_dir "$n")"}
  text=${text//@@LISTEN_HOST@@/"$(shard_host "$n")"}
  text=${text//@@HTTP_PORT@@/"$HTTP_PORT"}
  text=${text//@@TCP_PORT@@/"$(shard_tcp "$n")"}
  text=${text//@@CLUSTER@@/"$CLUSTER"}
  local s
  for s in "${SHARDS[@]}"; do
    text=${text//@@SHARD${s}_HOST@@/"$(shard_host "$s")"}
    text=${text//@@SHARD${s}_TCP_PORT@@/"$(shard_tcp "$s")"}
  done
  mkdir -p "$(dirname -- "$dst")"
  if [[ ! -f $dst ]] || [[ $(<"$dst") != "$text" ]]; then
    printf '%s\n' "$text" >"$dst.tmp"
    mv -f "$dst.tmp" "$dst"
  fi
}

# Launches shard $1 in the background (readiness is awaited by the caller).
launch_shard() {
  local n=$1 dir host tcp
  dir=$(shard_dir "$n")
  host=$(shard_host "$n")
  tcp=$(shard_tcp "$n")
  if shard_running "$n"; then
    log "shard $n: already running on $host:$HTTP_PORT (http), $host:$tcp (native)"
    return 0
  fi
  local port
  for port in "$HTTP_PORT" "$tcp"; do
    port_open "$host" "$port" && die "shard $n: $host:$port is already taken by another process"
  done
  mkdir -p "$dir"/{etc,data,tmp,user_files,format_schemas,log}
  render "$TEMPLATES/config.xml" "$dir/etc/config.xml" "$n"
  render "$TEMPLATES/remote-servers.xml" "$dir/etc/config.d/remote-servers.xml" "$n"
  render "$TEMPLATES/users.xml" "$dir/etc/users.xml" "$n"
  render "$TEMPLATES/shard-users.xml" "$dir/etc/users.d/shard.xml" "$n"
  # A pid file left by a killed server makes 18.16 refuse to start.
  rm -f "$(shard_pidfile "$n")"
  log "shard $n: starting on $host:$HTTP_PORT (http), $host:$tcp (native), data $dir"
  if ! clickhouse-server --config-file="$(shard_conf "$n")" --pid-file="$(shard_pidfile "$n")" --daemon \
    </dev/null >>"$dir/log/stdout.log" 2>&1 9>&-; then
    show_log "$dir/log/clickhouse-server.err.log"
    die "shard $n: clickhouse-server failed to start"
  fi
}

await_shard() {
  local n=$1 i pid dir
  dir=$(shard_dir "$n")
  for ((i = 0; i < TIMEOUT * 10; i++)); do
    if shard_ping "$n"; then
      log "shard $n: ready"
      return 0
    fi
    if (( i > 20 )); then
      pid=$(read_pid "$(shard_pidfile "$n")")
      if [[ -z $pid ]] || ! kill -0 "$pid" 2>/dev/null; then break; fi
    fi
    sleep 0.1
  done
  show_log "$dir/log/clickhouse-server.err.log"
  show_log "$dir/log/stdout.log"
  die "shard $n: not answering Ok. on http://$(shard_host "$n"):$HTTP_PORT/ping within ${TIMEOUT}s"
}

# Signals shard $1 to stop; prints its pid when it was running.
signal_shard() {
  local n=$1 pid
  pid=$(read_pid "$(shard_pidfile "$n")")
  if ! pid_is "$pid" "$(shard_conf "$n")"; then
    rm -f "$(shard_pidfile "$n")"
    log "shard $n: not running" >&2
    return 0
  fi
  log "shard $n: stopping (pid $pid)" >&2
  kill -TERM "$pid" 2>/dev/null || true
  echo "$pid"
}

await_gone() {
  local n=$1 pid=$2 i
  for ((i = 0; i < TIMEOUT * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    err "shard $n: still running after ${TIMEOUT}s, killing pid $pid"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$(shard_pidfile "$n")"
}

status_shard() {
  local n=$1
  if shard_running "$n" && shard_ping "$n"; then
    echo "shard $n  up    $(shard_host "$n"):$HTTP_PORT http, $(shard_host "$n"):$(shard_tcp "$n") native  (pid $(read_pid "$(shard_pidfile "$n")"), data $(shard_dir "$n"))"
  else
    echo "shard $n  down"
    return 1
  fi
}

take_lock() {
  mkdir -p "$DATA"
  exec 9>"$DATA/.clickhouse-shards.lock"
  flock -w 300 9 || die "another clickhouse-shards.sh holds $DATA/.clickhouse-shards.lock for 5 minutes"
}

main() {
  local n rc=0
  case ${1:-} in
    start)
      take_lock
      if ! command -v clickhouse-server >/dev/null 2>&1; then
        bash "$SCRIPT_DIR/stack.sh" install 9>&-
      fi
      for n in "${SHARDS[@]}"; do launch_shard "$n"; done
      for n in "${SHARDS[@]}"; do await_shard "$n"; done
      ;;
    stop)
      take_lock
      # Both at once: each waits a moment for the other's idle connections to it.
      local pids=()
      for n in "${SHARDS[@]}"; do pids[n]=$(signal_shard "$n"); done
      for n in "${SHARDS[@]}"; do [[ -z ${pids[n]} ]] || await_gone "$n" "${pids[n]}"; done
      ;;
    status)
      for n in "${SHARDS[@]}"; do status_shard "$n" || rc=3; done
      return $rc
      ;;
    env)
      echo "export CLICKHOUSE_URL=http://$(shard_host 1):$HTTP_PORT"
      echo "export CLICKHOUSE_CLUSTER=$CLUSTER"
      ;;
    *)
      sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
      exit 2
      ;;
  esac
}

main "$@"
