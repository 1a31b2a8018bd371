#!/usr/bin/env bash
# Local store servers for development and tests: PostgreSQL 15, Redis 7, ClickHouse 18.16
# (Debian bookworm packages), all bound to 127.0.0.1, all data under ${DATA_DIR:-./.data}.
#
#   scripts/stack.sh up                 install what is missing, start what is not running
#   scripts/stack.sh down               stop them all
#   scripts/stack.sh status             show which are up (exit 0 = all up, 3 = some down)
#   scripts/stack.sh install            only install the missing Debian packages (with chromium)
#   scripts/stack.sh env                print the connection URLs as export lines
#   scripts/stack.sh start-<name>|stop-<name>   one server; name = postgres|redis|redis-cluster|clickhouse
#
# `install` also installs Debian's chromium, the browser of the page tests (test/helpers/browser.ts,
# through playwright-core), and `up` does when run as root; present packages are not looked up again.
#
# Besides the single Redis, `up` starts a three-master Redis Cluster (scripts/redis-cluster.sh) on
# REDIS_CLUSTER_BASE_PORT..+2 (7000-7002), for the tests that run against a cluster.
#
# Environment: DATA_DIR (relative to the repo root unless absolute), PGPORT (5432),
# REDIS_PORT (6379), CLICKHOUSE_HTTP_PORT (8123), CLICKHOUSE_TCP_PORT (9000),
# CLICKHOUSE_DIR (ClickHouse's own folder, $DATA_DIR/clickhouse; give it to every command that
# touches ClickHouse), STACK_TIMEOUT (readiness timeout in seconds, 60).
#
# CLICKHOUSE_DIR exists for machines whose disk makes ClickHouse slow, such as an ext4 without a
# journal: there every new file skips the inodes freed in the last minutes, and ClickHouse creates
# and deletes dozens of files per insert and merge (bench/README.md). A folder on tmpfs (say
# /dev/shm/svc-clickhouse) avoids that, but does not survive a reboot.
#
# Credentials: postgres role svc/svc owning databases svc and svc_test;
# redis without password; clickhouse user default without password.
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd -- "$SCRIPT_DIR/.." && pwd -P)

# shellcheck source=scripts/processHelpers.sh
source "$SCRIPT_DIR/processHelpers.sh"
DATA=$(data_dir "$ROOT")

HOST=127.0.0.1
PGPORT=${PGPORT:-5432}
REDIS_PORT=${REDIS_PORT:-6379}
CH_HTTP_PORT=${CLICKHOUSE_HTTP_PORT:-8123}
CH_TCP_PORT=${CLICKHOUSE_TCP_PORT:-9000}
TIMEOUT=${STACK_TIMEOUT:-60}
REDIS_CLUSTER_BASE=${REDIS_CLUSTER_BASE_PORT:-7000}

PG_MAJOR=15
PG_BIN=${PG_BIN:-/usr/lib/postgresql/$PG_MAJOR/bin}
PG_DATA=$DATA/postgres
PG_LOG=$DATA/postgres.log
PG_SOCK=$DATA/pg-socket
# A unix socket path must fit in 107 bytes; fall back to /tmp for deep checkouts.
if (( ${#PG_SOCK} + 20 > 107 )); then PG_SOCK=/tmp; fi
PG_USER=svc
PG_PASSWORD=svc
PG_DATABASES=(svc svc_test)

REDIS_DIR=$DATA/redis
REDIS_PID=$DATA/redis.pid
REDIS_LOG=$DATA/redis.log

ch_dir_in=${CLICKHOUSE_DIR:-$DATA/clickhouse}
case $ch_dir_in in
  /*) CH_DIR=$(realpath -m -- "$ch_dir_in") ;;
  *) CH_DIR=$(realpath -m -- "$ROOT/$ch_dir_in") ;;
esac
CH_CONF=$CH_DIR/etc/config.xml
CH_USERS=$CH_DIR/etc/users.xml
CH_PID=$CH_DIR/clickhouse-server.pid
CH_LOG=$CH_DIR/log/clickhouse-server.log
CH_ERRLOG=$CH_DIR/log/clickhouse-server.err.log
CH_TEMPLATES=$SCRIPT_DIR/clickhouse

IS_ROOT=0
[[ $(id -u) -eq 0 ]] && IS_ROOT=1

log() { printf 'stack: %s\n' "$*"; }
err() { printf 'stack: ERROR: %s\n' "$*" >&2; }
die() { err "$@"; exit 1; }

now_ms() { local t; t=$(date +%s%N); echo $(( t / 1000000 )); }

# ---------------------------------------------------------------- helpers

# Who listens on a port (best effort, needs ss from iproute2).
port_owner() {
  if command -v ss >/dev/null 2>&1; then
    ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*users:((\(.*\)))$/\1/p' | head -n1
  fi
}

port_busy_msg() {
  local name=$1 port=$2 var=$3 owner
  owner=$(port_owner "$port")
  err "$name: port $HOST:$port is already in use by another process${owner:+ ($owner)}."
  err "  Stop that process or pick another port, e.g. $var=$((port + 10000)) scripts/stack.sh up"
}

# GET http://127.0.0.1:port/path, print the body. curl when present, else node.
http_get() {
  local url="http://$HOST:$1$2"
  if command -v curl >/dev/null 2>&1; then
    curl -fsS --max-time 5 "$url" 2>/dev/null
  elif command -v node >/dev/null 2>&1; then
    node -e 'fetch(process.argv[1],{signal:AbortSignal.timeout(5000)}).then(async r=>{if(!r.ok)process.exit(1);process.stdout.write(await r.text())}).catch(()=>process.exit(1))' "$url"
  else
    return 1
  fi
}

as_pg() {
  if (( IS_ROOT )); then runuser -u postgres -- "$@"; else "$@"; fi
}

# ---------------------------------------------------------------- packages

CHROMIUM=/usr/bin/chromium
chromium_ok() { [[ -x $CHROMIUM ]]; }

pg_bins_ok() { [[ -x $PG_BIN/postgres && -x $PG_BIN/initdb && -x $PG_BIN/pg_ctl && -x $PG_BIN/psql ]]; }

apt_has() { apt-cache show "$1" >/dev/null 2>&1; }

# ensure_packages postgres redis clickhouse chromium  (any subset)
ensure_packages() {
  local want=() c
  for c in "$@"; do
    case $c in
      postgres) pg_bins_ok || want+=("postgresql-$PG_MAJOR") ;;
      redis) { command -v redis-server && command -v redis-cli; } >/dev/null 2>&1 || want+=(redis-server) ;;
      clickhouse) command -v clickhouse-server >/dev/null 2>&1 || want+=(clickhouse-server) ;;
      chromium) chromium_ok || want+=(chromium) ;;
    esac
  done
  (( ${#want[@]} )) || return 0

  if (( ! IS_ROOT )); then
    die "missing Debian packages: ${want[*]}. Run this script as root once, or: sudo apt-get install -y ${want[*]}"
  fi
  command -v apt-get >/dev/null 2>&1 || die "missing packages ${want[*]} and no apt-get on this machine"

  mkdir -p "$DATA"
  local apt_log=$DATA/apt.log
  export DEBIAN_FRONTEND=noninteractive
  log "installing ${want[*]} with apt-get (log: $apt_log) ..."
  # Keep package postinst scripts from starting the system services
  # (Debian's own cluster / redis / clickhouse would grab our ports).
  local policy=/usr/sbin/policy-rc.d made_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    made_policy=1
  fi
  local rc=0
  apt-get update -q >"$apt_log" 2>&1 || rc=$?
  if (( rc == 0 )); then
    # clickhouse-client is optional (not every release ships it).
    if [[ " ${want[*]} " == *" clickhouse-server "* ]] && ! command -v clickhouse-client >/dev/null 2>&1 \
      && apt_has clickhouse-client; then
      want+=(clickhouse-client)
    fi
    if [[ " ${want[*]} " == *" clickhouse-server "* ]] && ! apt_has clickhouse-server; then
      (( made_policy )) && rm -f "$policy"
      die "clickhouse-server is not available from apt here (Debian bookworm ships 18.16.1)"
    fi
    apt-get install -y -q --no-install-recommends \
      -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
      "${want[@]}" </dev/null >>"$apt_log" 2>&1 || rc=$?
  fi
  (( made_policy )) && rm -f "$policy"
  if (( rc != 0 )); then
    show_log "$apt_log"
    die "apt-get failed (exit $rc) installing: ${want[*]}"
  fi
  hash -r
  for c in "$@"; do
    case $c in
      postgres) pg_bins_ok || die "postgres: still no server binaries in $PG_BIN after installing" ;;
      redis) command -v redis-server >/dev/null 2>&1 || die "redis: still no redis-server after installing" ;;
      clickhouse) command -v clickhouse-server >/dev/null 2>&1 || die "clickhouse: still no clickhouse-server after installing" ;;
      chromium) chromium_ok || die "chromium: still no $CHROMIUM after installing" ;;
    esac
  done
  log "installed ${want[*]}"
}

# The page tests' browser: installed by `up` only when it can be (root); otherwise `up` still
# starts the stores and says how to get it, and the browser tests fail naming the same command.
ensure_browser() {
  chromium_ok && return 0
  if (( IS_ROOT )); then
    ensure_packages chromium
  else
    log "no $CHROMIUM for the browser tests: run 'scripts/stack.sh install' as root, or: sudo apt-get install -y chromium"
  fi
}

# ---------------------------------------------------------------- lock

take_lock() {
  mkdir -p "$DATA"
  exec 9>"$DATA/.stack.lock"
  if ! flock -w 300 9; then die "another stack.sh holds $DATA/.stack.lock for 5 minutes"; fi
}

# ---------------------------------------------------------------- postgres

pg_running() { [[ -s $PG_DATA/postmaster.pid ]] && as_pg "$PG_BIN/pg_ctl" status -D "$PG_DATA" >/dev/null 2>&1; }

# Port the running cluster listens on (from postmaster.pid, line 4).
pg_running_port() { sed -n 4p "$PG_DATA/postmaster.pid" 2>/dev/null || true; }

psql_admin() {
  as_pg "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_SOCK" -p "$PGPORT" -U postgres -d postgres "$@"
}

# Make $1 reachable by the postgres user: add o+x to ancestors that lack it.
pg_fix_traversal() {
  local d=$1
  as_pg test -x "$d" 2>/dev/null && return 0
  while [[ $d != / ]]; do
    if [[ -d $d ]] && ! as_pg test -x "$d" 2>/dev/null; then
      log "postgres: chmod o+x $d (the postgres user must reach the data folder)"
      chmod o+x "$d"
    fi
    d=$(dirname -- "$d")
  done
}

pg_prepare() {
  mkdir -p "$DATA" "$PG_DATA"
  [[ $PG_SOCK == /tmp ]] || mkdir -p "$PG_SOCK"
  touch "$PG_LOG"
  if (( IS_ROOT )); then
    id postgres >/dev/null 2>&1 || die "postgres: no 'postgres' OS user (is postgresql-$PG_MAJOR installed?)"
    chown postgres:postgres "$PG_DATA" "$PG_LOG"
    [[ $PG_SOCK == /tmp ]] || { chown postgres:postgres "$PG_SOCK"; chmod 755 "$PG_SOCK"; }
    pg_fix_traversal "$PG_DATA"
  else
    [[ $PG_SOCK == /tmp ]] || chmod 700 "$PG_SOCK"
  fi
  chmod 700 "$PG_DATA"

  if [[ ! -s $PG_DATA/PG_VERSION ]]; then
    if [[ -n $(ls -A "$PG_DATA") ]]; then
      die "postgres: $PG_DATA is not empty but holds no cluster; move it away and re-run"
    fi
    log "postgres: initdb $PG_DATA"
    local auth=peer
    (( IS_ROOT )) || auth=trust   # non-root: socket dir is 0700, only this user reaches it
    if ! as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U postgres -E UTF8 --locale=C.UTF-8 \
      --auth-local="$auth" --auth-host=scram-sha-256 >"$DATA/initdb.log" 2>&1; then
      show_log "$DATA/initdb.log"
      die "postgres: initdb failed"
    fi
  fi
  local v
  v=$(cat "$PG_DATA/PG_VERSION")
  [[ $v == "$PG_MAJOR" ]] || die "postgres: $PG_DATA holds a PostgreSQL $v cluster, expected $PG_MAJOR"

  # Settings that follow the environment are kept in stack.conf, included from postgresql.conf.
  if ! grep -q "^include_if_exists = 'stack.conf'" "$PG_DATA/postgresql.conf"; then
    printf "\n# Added by scripts/stack.sh\ninclude_if_exists = 'stack.conf'\n" >>"$PG_DATA/postgresql.conf"
  fi
  local conf
  conf=$(cat <<EOF
# Written by scripts/stack.sh on every start; edit the script, not this file.
listen_addresses = '$HOST'
port = $PGPORT
unix_socket_directories = '$PG_SOCK'
max_connections = 200
timezone = 'UTC'
log_timezone = 'UTC'
EOF
)
  if [[ ! -f $PG_DATA/stack.conf ]] || [[ $(cat "$PG_DATA/stack.conf") != "$conf" ]]; then
    printf '%s\n' "$conf" >"$PG_DATA/stack.conf"
    (( IS_ROOT )) && chown postgres:postgres "$PG_DATA/stack.conf"
  fi
  return 0
}

pg_ensure_db() {
  local have
  have=$(psql_admin -tA -c "SELECT (SELECT count(*) FROM pg_roles WHERE rolname = '$PG_USER' AND rolcanlogin AND rolcreatedb)
      + (SELECT count(*) FROM pg_database d JOIN pg_roles r ON r.oid = d.datdba
         WHERE r.rolname = '$PG_USER' AND d.datname IN ('svc', 'svc_test'))") \
    || die "postgres: cannot query the server as superuser over $PG_SOCK"
  [[ $have == 3 ]] && return 0
  log "postgres: creating role $PG_USER and databases ${PG_DATABASES[*]}"
  psql_admin <<SQL >/dev/null
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN
    CREATE ROLE $PG_USER LOGIN CREATEDB PASSWORD '$PG_PASSWORD';
  ELSE
    ALTER ROLE $PG_USER LOGIN CREATEDB PASSWORD '$PG_PASSWORD';
  END IF;
END \$\$;
SELECT format('CREATE DATABASE %I OWNER $PG_USER', d)
  FROM unnest(ARRAY['svc', 'svc_test']) AS d
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = d)
\gexec
ALTER DATABASE svc OWNER TO $PG_USER;
ALTER DATABASE svc_test OWNER TO $PG_USER;
SQL
}

# Log in the way the application does: TCP, password auth.
pg_check_app_login() {
  PGPASSWORD=$PG_PASSWORD PGCONNECT_TIMEOUT=5 "$PG_BIN/psql" -X -q -tA \
    -h "$HOST" -p "$PGPORT" -U "$PG_USER" -d svc -c 'SELECT 1' >/dev/null 2>&1
}

start_postgres() {
  ensure_packages postgres
  # A server that was just killed can still look alive for a moment, and one that is
  # starting refuses queries: wait until it answers or is gone.
  local i
  for ((i = 0; i < TIMEOUT * 5; i++)); do
    pg_running || break
    psql_admin -tA -c 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.2
  done
  if pg_running; then
    local p
    p=$(pg_running_port)
    if [[ $p != "$PGPORT" ]]; then
      die "postgres: the cluster in $PG_DATA already runs on port $p, not $PGPORT; run 'scripts/stack.sh stop-postgres' first"
    fi
    pg_ensure_db
    pg_check_app_login || die "postgres: running, but svc cannot log in on $HOST:$PGPORT"
    log "postgres: already running on $HOST:$PGPORT"
    return 0
  fi
  if port_open "$PGPORT"; then
    port_busy_msg postgres "$PGPORT" PGPORT
    exit 1
  fi
  pg_prepare
  log "postgres: starting on $HOST:$PGPORT (data $PG_DATA, log $PG_LOG)"
  # 9>&-: the server must not inherit the lock fd (it would hold the lock forever).
  if ! as_pg "$PG_BIN/pg_ctl" start -D "$PG_DATA" -l "$PG_LOG" -w -t "$TIMEOUT" -s >/dev/null 2>&1 9>&-; then
    show_log "$PG_LOG"
    die "postgres: did not become ready within ${TIMEOUT}s"
  fi
  pg_ensure_db
  local ok=0
  for ((i = 0; i < TIMEOUT * 5; i++)); do
    if pg_check_app_login; then ok=1; break; fi
    sleep 0.2
  done
  if (( ! ok )); then
    show_log "$PG_LOG"
    die "postgres: svc cannot log in over TCP on $HOST:$PGPORT"
  fi
  log "postgres: ready"
}

stop_postgres() {
  if ! pg_running; then
    log "postgres: not running"
    return 0
  fi
  log "postgres: stopping"
  if ! as_pg "$PG_BIN/pg_ctl" stop -D "$PG_DATA" -m fast -w -t "$TIMEOUT" -s >/dev/null 2>&1; then
    show_log "$PG_LOG"
    die "postgres: did not stop within ${TIMEOUT}s"
  fi
  log "postgres: stopped"
}

status_postgres() {
  if pg_running; then
    echo "postgres    up    $HOST:$(pg_running_port)  (pid $(sed -n 1p "$PG_DATA/postmaster.pid"), data $PG_DATA)"
  elif port_open "$PGPORT"; then
    echo "postgres    down  (but $HOST:$PGPORT is taken by another process)"
    return 1
  else
    echo "postgres    down"
    return 1
  fi
}

# ---------------------------------------------------------------- redis

redis_cli() { redis-cli -h "$HOST" -p "$REDIS_PORT" "$@"; }

redis_running() { pid_is "$(read_pid "$REDIS_PID")" redis-server; }

redis_ping() { [[ $(redis_cli ping 2>/dev/null) == PONG ]]; }

start_redis() {
  ensure_packages redis
  local i
  for ((i = 0; i < TIMEOUT * 10; i++)); do
    redis_running || break
    redis_ping && break
    sleep 0.1
  done
  if redis_running; then
    redis_ping || die "redis: our server (pid $(read_pid "$REDIS_PID")) runs but does not answer on $HOST:$REDIS_PORT; run 'scripts/stack.sh stop-redis' first"
    log "redis: already running on $HOST:$REDIS_PORT"
    return 0
  fi
  if port_open "$REDIS_PORT"; then
    port_busy_msg redis "$REDIS_PORT" REDIS_PORT
    exit 1
  fi
  mkdir -p "$REDIS_DIR"
  rm -f "$REDIS_PID"
  log "redis: starting on $HOST:$REDIS_PORT (data $REDIS_DIR, log $REDIS_LOG)"
  # shellcheck disable=SC2094  # redis writes its own log; we only append its stdout to it
  # lazyfree-lazy-expire: a de-duplication hash (one per connection and period, millions of
  # fields on a busy connection) is freed in the background when it expires, not in the
  # command loop, where it would stall every admission for as long as the free takes.
  # The append-only file is the durable record: RDB snapshots on top of it (save "") would fork
  # and serialise the whole dataset once more every minute under ingest load. rdbcompression no:
  # the rewrite of the append-only file writes an RDB base, and compressing every de-duplication
  # value was a third of that rewrite's CPU, taken from the edge's cores (docs/decisions/ingest.md).
  if ! redis-server --bind "$HOST" --port "$REDIS_PORT" --dir "$REDIS_DIR" \
    --lazyfree-lazy-expire yes --appendonly yes --save "" --rdbcompression no --daemonize yes --pidfile "$REDIS_PID" --logfile "$REDIS_LOG" \
    </dev/null >>"$REDIS_LOG" 2>&1 9>&-; then
    show_log "$REDIS_LOG"
    die "redis: redis-server failed to start"
  fi
  for ((i = 0; i < TIMEOUT * 10; i++)); do
    if redis_ping; then
      log "redis: ready"
      return 0
    fi
    sleep 0.1
  done
  show_log "$REDIS_LOG"
  die "redis: no PONG within ${TIMEOUT}s"
}

stop_redis() {
  local pid
  pid=$(read_pid "$REDIS_PID")
  if ! pid_is "$pid" redis-server; then
    rm -f "$REDIS_PID"
    log "redis: not running"
    return 0
  fi
  log "redis: stopping"
  # SIGTERM = graceful SHUTDOWN (flushes the append-only file). Signalling our pid rather
  # than sending SHUTDOWN to the port cannot hit some other server on that port.
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_gone "$pid" "$TIMEOUT"; then
    err "redis: still running after ${TIMEOUT}s, killing pid $pid"
    kill -KILL "$pid" 2>/dev/null || true
    wait_gone "$pid" 5 || true
  fi
  rm -f "$REDIS_PID"
  log "redis: stopped"
}

status_redis() {
  if redis_running && redis_ping; then
    echo "redis       up    $HOST:$REDIS_PORT  (pid $(read_pid "$REDIS_PID"), data $REDIS_DIR)"
  elif port_open "$REDIS_PORT"; then
    echo "redis       down  (but $HOST:$REDIS_PORT is taken by another process)"
    return 1
  else
    echo "redis       down"
    return 1
  fi
}

# ---------------------------------------------------------------- redis cluster

# 9>&-: the cluster's servers must not inherit our lock fd.
redis_cluster() { bash "$SCRIPT_DIR/redis-cluster.sh" "$1" "$REDIS_CLUSTER_BASE" 9>&-; }

# ---------------------------------------------------------------- clickhouse

ch_running() { pid_is "$(read_pid "$CH_PID")" "$CH_CONF"; }

ch_ping() { [[ $(http_get "$CH_HTTP_PORT" /ping 2>/dev/null) == Ok.* ]]; }

ch_version() { http_get "$CH_HTTP_PORT" '/?query=SELECT%20version()' 2>/dev/null | tr -d '\n'; }

# Render a template: @@KEY@@ placeholders. Writes only when the content changes
# (ClickHouse watches its config files and reloads them).
ch_render() {
  local src=$1 dst=$2 text
  [[ -f $src ]] || die "clickhouse: template $src is missing"
  text=$(<"$src")
  text=${text//@@CH_DIR@@/"$CH_DIR"}
  text=${text//@@LISTEN_HOST@@/"$HOST"}
  text=${text//@@HTTP_PORT@@/"$CH_HTTP_PORT"}
  text=${text//@@TCP_PORT@@/"$CH_TCP_PORT"}
  if [[ ! -f $dst ]] || [[ $(<"$dst") != "$text" ]]; then
    printf '%s\n' "$text" >"$dst.tmp"
    mv -f "$dst.tmp" "$dst"
  fi
}

start_clickhouse() {
  ensure_packages clickhouse
  local i pid
  for ((i = 0; i < TIMEOUT * 10; i++)); do
    ch_running || break
    ch_ping && break
    sleep 0.1
  done
  if ch_running; then
    ch_ping || die "clickhouse: our server (pid $(read_pid "$CH_PID")) runs but does not answer on $HOST:$CH_HTTP_PORT; run 'scripts/stack.sh stop-clickhouse' first"
    log "clickhouse: already running on $HOST:$CH_HTTP_PORT (http), $HOST:$CH_TCP_PORT (native)"
    return 0
  fi
  local port var
  for port in "$CH_HTTP_PORT" "$CH_TCP_PORT"; do
    if port_open "$port"; then
      var=CLICKHOUSE_HTTP_PORT
      [[ $port == "$CH_TCP_PORT" ]] && var=CLICKHOUSE_TCP_PORT
      port_busy_msg clickhouse "$port" "$var"
      exit 1
    fi
  done
  mkdir -p "$CH_DIR"/{etc,data,tmp,user_files,format_schemas,log}
  ch_render "$CH_TEMPLATES/config.xml" "$CH_CONF"
  ch_render "$CH_TEMPLATES/users.xml" "$CH_USERS"
  # A pid file left by a killed server makes 18.16 refuse to start.
  rm -f "$CH_PID"
  log "clickhouse: starting on $HOST:$CH_HTTP_PORT (http), $HOST:$CH_TCP_PORT (native) (config $CH_CONF, log $CH_LOG)"
  if ! clickhouse-server --config-file="$CH_CONF" --pid-file="$CH_PID" --daemon \
    </dev/null >>"$CH_DIR/log/stdout.log" 2>&1 9>&-; then
    show_log "$CH_ERRLOG"
    show_log "$CH_DIR/log/stdout.log"
    die "clickhouse: clickhouse-server failed to start"
  fi
  for ((i = 0; i < TIMEOUT * 10; i++)); do
    if ch_ping; then
      local v
      v=$(ch_version)
      [[ -n $v ]] || die "clickhouse: /ping answers but SELECT version() failed"
      log "clickhouse: ready (version $v)"
      return 0
    fi
    # Died during startup? (the pid file appears a moment after --daemon returns)
    if (( i > 20 )); then
      pid=$(read_pid "$CH_PID")
      if [[ -z $pid ]] || ! kill -0 "$pid" 2>/dev/null; then break; fi
    fi
    sleep 0.1
  done
  show_log "$CH_ERRLOG"
  show_log "$CH_DIR/log/stdout.log"
  die "clickhouse: not answering Ok. on http://$HOST:$CH_HTTP_PORT/ping within ${TIMEOUT}s"
}

stop_clickhouse() {
  local pid
  pid=$(read_pid "$CH_PID")
  if ! pid_is "$pid" clickhouse-server; then
    rm -f "$CH_PID"
    log "clickhouse: not running"
    return 0
  fi
  log "clickhouse: stopping"
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_gone "$pid" "$TIMEOUT"; then
    err "clickhouse: still running after ${TIMEOUT}s, killing pid $pid"
    kill -KILL "$pid" 2>/dev/null || true
    wait_gone "$pid" 5 || true
  fi
  rm -f "$CH_PID"
  log "clickhouse: stopped"
}

status_clickhouse() {
  if ch_running && ch_ping; then
    echo "clickhouse  up    $HOST:$CH_HTTP_PORT http, $HOST:$CH_TCP_PORT native  (pid $(read_pid "$CH_PID"), version $(ch_version), data $CH_DIR)"
  elif port_open "$CH_HTTP_PORT"; then
    echo "clickhouse  down  (but $HOST:$CH_HTTP_PORT is taken by another process)"
    return 1
  else
    echo "clickhouse  down"
    return 1
  fi
}

# ---------------------------------------------------------------- commands

cmd_env() {
  cat <<EOF
export DATABASE_URL=postgres://$PG_USER:$PG_PASSWORD@$HOST:$PGPORT/svc
# test database: postgres://$PG_USER:$PG_PASSWORD@$HOST:$PGPORT/svc_test
export REDIS_URL=redis://$HOST:$REDIS_PORT
# Redis Cluster instead: export REDIS_CLUSTER_NODES=$HOST:$REDIS_CLUSTER_BASE,$HOST:$((REDIS_CLUSTER_BASE + 1)),$HOST:$((REDIS_CLUSTER_BASE + 2))
export CLICKHOUSE_URL=http://$HOST:$CH_HTTP_PORT
EOF
}

cmd_status() {
  local rc=0
  status_postgres || rc=3
  status_redis || rc=3
  redis_cluster status || rc=3
  status_clickhouse || rc=3
  return $rc
}

usage() {
  sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

main() {
  local cmd=${1:-}
  case $cmd in
    up)
      local t0
      t0=$(now_ms)
      take_lock
      ensure_packages postgres redis clickhouse
      ensure_browser
      start_postgres
      start_redis
      redis_cluster start
      start_clickhouse
      local ms=$(( $(now_ms) - t0 ))
      log "up in $((ms / 1000)).$(printf '%03d' $((ms % 1000)))s: postgres $HOST:$PGPORT, redis $HOST:$REDIS_PORT, redis cluster $HOST:$REDIS_CLUSTER_BASE-$((REDIS_CLUSTER_BASE + 2)), clickhouse $HOST:$CH_HTTP_PORT"
      ;;
    down)
      take_lock
      stop_clickhouse
      redis_cluster stop
      stop_redis
      stop_postgres
      ;;
    status) cmd_status ;;
    install)
      take_lock
      ensure_packages postgres redis clickhouse chromium
      log "packages present"
      ;;
    env) cmd_env ;;
    start-postgres) take_lock; start_postgres ;;
    stop-postgres) take_lock; stop_postgres ;;
    start-redis) take_lock; start_redis ;;
    stop-redis) take_lock; stop_redis ;;
    start-redis-cluster) take_lock; redis_cluster start ;;
    stop-redis-cluster) take_lock; redis_cluster stop ;;
    start-clickhouse) take_lock; start_clickhouse ;;
    stop-clickhouse) take_lock; stop_clickhouse ;;
    -h | --help | help) usage ;;
    *)
      usage >&2
      exit 2
      ;;
  esac
}

main "$@"
