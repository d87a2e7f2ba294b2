#!/usr/bin/env bash
# Starts the real peers the interop specs run against: dockerd (with a busybox:local image made
# from Debian's busybox-static, since there is no internet) and redis-server. Idempotent.
# Installing them is .ci/run's job (or: apt-get install -y docker.io docker-registry skopeo
# busybox-static redis-server).
set -euo pipefail

if ! curl -sf --unix-socket /var/run/docker.sock http://localhost/_ping >/dev/null 2>&1; then
  echo "starting dockerd"
  # In a session of its own: a caller's shell that ends takes its process group with it.
  setsid -f dockerd --iptables=false --bridge=none >/tmp/dockerd.log 2>&1 </dev/null
  for _ in $(seq 1 60); do
    curl -sf --unix-socket /var/run/docker.sock http://localhost/_ping >/dev/null 2>&1 && break
    sleep 1
  done
  curl -sf --unix-socket /var/run/docker.sock http://localhost/_ping >/dev/null || { echo "dockerd did not start"; tail -20 /tmp/dockerd.log; exit 1; }
fi

if ! docker image inspect busybox:local >/dev/null 2>&1; then
  echo "importing busybox:local from busybox-static"
  root=$(mktemp -d)
  mkdir -p "$root/bin"
  cp /bin/busybox "$root/bin/busybox"
  for applet in sh echo cat sleep ls true false printf yes head seq env; do ln -s busybox "$root/bin/$applet"; done
  tar -C "$root" -c . | docker import - busybox:local >/dev/null
  rm -rf "$root"
fi

if ! redis-cli -p 6379 ping >/dev/null 2>&1; then
  echo "starting redis-server"
  redis-server --daemonize yes --port 6379 --save "" --appendonly no >/dev/null
  for _ in $(seq 1 20); do redis-cli -p 6379 ping >/dev/null 2>&1 && break; sleep 0.5; done
fi
echo "peers ready"
