#!/usr/bin/env bash
# Runs the clients' own test suites (docker-py 7.1.0's tests/integration and docker-compose 1.29.2's
# tests/acceptance) against dockerd and against the demo's default sandbox engine, one engine at a
# time, and writes a JUnit XML and a summary per suite and engine to $OUT (docs/client-suites.md
# explains the results).
#
#   bash scripts/client-suites.sh [dockerpy|compose|all] [dockerd|dockgate|both] [pytest args…]
#
# Needs (as root, Debian): docker.io, docker-compose, busybox-static, bubblewrap, slirp4netns,
# python3-pytest, python3-pytest-timeout; python3 with docker 7.1.0 and pytest (the project's
# machine has them); the sources of docker-py 7.1.0 in $DOCKERPY_SRC and docker/compose 1.29.2 in
# $COMPOSE_SRC, e.g. `git -C docker-py archive 7.1.0 | tar x -C $DOCKERPY_SRC`.
#
# The suites prune, remove images and make networks: they get a dockerd of their own (its own
# data root and socket) so a shared dockerd's containers are never touched, and a demo of their
# own (own socket, port and state directory). dockerd runs as the project's peers do
# (--iptables=false --bridge=none). With no internet, both engines get the same offline image
# under the names the suites pull: dockgate's seed (busybox-static with every applet link,
# /etc/passwd and /etc/group) is rebuilt here for dockerd and tagged alpine:3.10, alpine:latest,
# busybox:latest and busybox:1.31.0-uclibc.
set -uo pipefail

SUITES=${1:-all}
ENGINES=${2:-both}
shift 2 2>/dev/null || shift $#
HERE=$(cd "$(dirname "$0")/.." && pwd)
DOCKERPY_SRC=${DOCKERPY_SRC:-/tmp/dockerpy}
COMPOSE_SRC=${COMPOSE_SRC:-/tmp/compose129}
OUT=${OUT:-/tmp/client-suites}
WORK=${WORK:-/tmp/client-suites-work}
TIMEOUT=${TEST_TIMEOUT:-120}
DOCKERD_SOCK=$WORK/dockerd.sock
DOCKGATE_SOCK=$WORK/dockgate.sock
DOCKGATE_PORT=${DOCKGATE_PORT:-15391}
export PATH=/usr/local/bin:$PATH
mkdir -p "$OUT" "$WORK"

ping_sock() { curl -sf --max-time 5 --unix-socket "$1" http://localhost/_ping >/dev/null 2>&1; }
wait_sock() { for _ in $(seq 1 120); do ping_sock "$1" && return 0; sleep 1; done; return 1; }

start_dockerd() {
  ping_sock "$DOCKERD_SOCK" && return 0
  # A fresh engine each run: a swarm state left by the last run panics dockerd 20.10 at start.
  local data; data=$WORK/dockerd-$(date +%s); mkdir -p "$data/data" "$data/exec"
  nohup dockerd --iptables=false --bridge=none --data-root "$data/data" --exec-root "$data/exec" \
    --pidfile "$WORK/dockerd.pid" -H "unix://$DOCKERD_SOCK" >"$WORK/dockerd.log" 2>&1 &
  wait_sock "$DOCKERD_SOCK" || { echo "dockerd did not start"; tail -20 "$WORK/dockerd.log"; exit 1; }
}

stop_pid() { local p; p=$(cat "$1" 2>/dev/null) || return 0; kill "$p" 2>/dev/null; for _ in $(seq 1 30); do kill -0 "$p" 2>/dev/null || return 0; sleep 1; done; }
stop_dockerd() { stop_pid "$WORK/dockerd.pid"; }

# The same root filesystem as dockgate's offline seed (lib/engine/images/store/busybox-seed.ts),
# imported on both engines by cs_seed.py under the names the suites pull.
make_seed_rootfs() {
  [ -s "$WORK/seed-rootfs.tar" ] && return 0
  local root; root=$(mktemp -d)
  mkdir -p "$root"/{bin,dev,etc,home/user,proc,root,sbin,sys,tmp,usr/bin,usr/sbin,var/tmp}
  chmod 1777 "$root/tmp" "$root/var/tmp"; chmod 700 "$root/root"; chmod 555 "$root/proc" "$root/sys"
  chown 1000:1000 "$root/home/user"
  cp /bin/busybox "$root/bin/busybox"
  printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
  printf 'root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n' >"$root/etc/group"
  /bin/busybox --list-full | grep -E '^(usr/)?s?bin/[^/]+$' | grep -v '^bin/busybox$' | while read -r l; do ln -sf /bin/busybox "$root/$l"; done
  tar -C "$root" -cf "$WORK/seed-rootfs.tar" .
  rm -rf "$root"
}

start_dockgate() {
  ping_sock "$DOCKGATE_SOCK" && return 0
  (cd "$HERE" && npm run build --silent && npm run build:demo --silent) || exit 1
  rm -rf "$WORK/dockgate-state"
  nohup node "$HERE/demo/dist/start.cjs" --engine-socket "$DOCKGATE_SOCK" --state-dir "$WORK/dockgate-state" \
    --port "$DOCKGATE_PORT" --api-range 1.24-1.41 --log-level warn >"$WORK/dockgate.log" 2>&1 &
  echo $! >"$WORK/dockgate.pid"
  wait_sock "$DOCKGATE_SOCK" || { echo "the demo did not start"; tail -20 "$WORK/dockgate.log"; exit 1; }
}

stop_dockgate() { stop_pid "$WORK/dockgate.pid"; }

summary() { tail -1 "$1" | tr -d '='; } # pytest's own count line

# Swarm (and what needs it: services, secrets, configs, nodes) is not run: dockerd 20.10 panics in
# SwarmTest.test_update_node here and every later test then fails on both runs' dockerd; dockgate
# answers swarm with a 501. Plugins need Docker Hub (vieux/sshfs), which this machine cannot reach.
SWARM_IGNORE="--ignore=tests/integration/api_swarm_test.py --ignore=tests/integration/api_service_test.py
 --ignore=tests/integration/api_secret_test.py --ignore=tests/integration/api_config_test.py
 --ignore=tests/integration/models_swarm_test.py --ignore=tests/integration/models_services_test.py
 --ignore=tests/integration/models_nodes_test.py --ignore=tests/integration/api_plugin_test.py"

run_dockerpy() { # engine socket
  local engine=$1 sock=$2; shift 2
  mkdir -p "$WORK/pyextra" "$WORK/pyseed"
  # pyenv's python3 holds docker 7.1.0; Debian's pytest-timeout is borrowed by file, and paramiko
  # (only the ssh transport uses it; helpers.py imports it) is a stub.
  ln -sf /usr/lib/python3/dist-packages/pytest_timeout.py "$WORK/pyextra/"
  ln -sf "$HERE/scripts/client-suites/cs_seed.py" "$WORK/pyseed/"
  printf 'class Channel:\n    pass\n' >"$WORK/pyextra/paramiko.py"
  (cd "$DOCKERPY_SRC" && DOCKER_HOST="unix://$sock" PYTHONPATH="$WORK/pyextra:$WORK/pyseed" CS_SEED_ROOTFS="$WORK/seed-rootfs.tar" CS_SEED_LOG="$OUT/seed-dockerpy-$engine.log" \
    DOCKER_CONFIG="$WORK/docker-config-$engine" timeout 5400 python3 -m pytest -p pytest_timeout -p cs_seed \
    -p no:cacheprovider --timeout "$TIMEOUT" -q -rfE --junitxml "$OUT/dockerpy-$engine.xml" tests/integration $SWARM_IGNORE "$@" \
    >"$OUT/dockerpy-$engine.log" 2>&1)
  echo "docker-py 7.1.0 on $engine: $(summary "$OUT/dockerpy-$engine.log")" | tee -a "$OUT/summary.txt"
}

run_compose() {
  local engine=$1 sock=$2; shift 2
  # Debian's docker-compose 1.29.2 and its docker-py 5 live in /usr/bin/python3's dist-packages.
  mkdir -p "$WORK/pyseed"; ln -sf "$HERE/scripts/client-suites/cs_seed.py" "$WORK/pyseed/"
  (cd "$COMPOSE_SRC" && DOCKER_HOST="unix://$sock" PYTHONPATH="$WORK/pyseed" CS_SEED_ROOTFS="$WORK/seed-rootfs.tar" CS_SEED_LOG="$OUT/seed-compose-$engine.log" \
    DOCKER_CONFIG="$WORK/docker-config-$engine" timeout 5400 /usr/bin/python3 -m pytest -p cs_seed -p no:cacheprovider \
    --timeout "$TIMEOUT" -q -rfE --junitxml "$OUT/compose-$engine.xml" tests/acceptance/cli_test.py "$@" \
    >"$OUT/compose-$engine.log" 2>&1)
  echo "docker-compose 1.29.2 acceptance on $engine: $(summary "$OUT/compose-$engine.log")" | tee -a "$OUT/summary.txt"
}

run_on() {
  local engine=$1 sock=$2; shift 2
  case $SUITES in dockerpy|all) run_dockerpy "$engine" "$sock" "$@";; esac
  case $SUITES in compose|all) run_compose "$engine" "$sock" "$@";; esac
}

make_seed_rootfs
date -u +"run at %Y-%m-%dT%H:%MZ" | tee -a "$OUT/summary.txt"
if [ "$ENGINES" = dockerd ] || [ "$ENGINES" = both ]; then start_dockerd; run_on dockerd "$DOCKERD_SOCK" "$@"; stop_dockerd; fi
if [ "$ENGINES" = dockgate ] || [ "$ENGINES" = both ]; then start_dockgate; run_on dockgate "$DOCKGATE_SOCK" "$@"; stop_dockgate; fi
