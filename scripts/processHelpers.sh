# Process and port helpers shared by scripts/stack.sh and scripts/redis-cluster.sh.
# Sourced at the top; the functions use HOST and err(), which the script defines before calling them.

# The data folder: DATA_DIR (default ./.data), relative to the project root $1.
data_dir() {
  local dir=${DATA_DIR:-./.data}
  case $dir in
    /*) realpath -m -- "$dir" ;;
    *) realpath -m -- "$1/$dir" ;;
  esac
}

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# pid is alive and its command line mentions $2.
pid_is() {
  local pid=$1 what=$2
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$what"
}

read_pid() { if [[ -s $1 ]]; then head -n1 "$1" | tr -dc 0-9; fi; }

# Wait until pid $1 is gone (max $2 seconds). Returns 1 on timeout.
wait_gone() {
  local pid=$1 secs=$2 i
  for ((i = 0; i < secs * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  ! kill -0 "$pid" 2>/dev/null
}

# The last lines of a server's log, to stderr.
show_log() {
  local f=$1
  if [[ -s $f ]]; then
    err "---- last lines of $f ----"
    tail -n 40 "$f" >&2
    err "----"
  else
    err "(no log at $f)"
  fi
}
