#!/usr/bin/env bash
# Runs dockerode's own mocha suite (test/*.js of a dockerode checkout) against dockerd and against
# the demo's default sandbox engine, one after the other, and prints each side's counts and the
# tests that pass on dockerd and fail on dockgate.
#
#   bash scripts/dockerode-suite.sh /path/to/dockerode        # a git checkout of apocas/dockerode
#
# There is no internet: the suite's `ubuntu` image is made here from busybox:local (start-peers.sh)
# with the host's bash and its libraries added, and loaded into both engines. The demo serves API
# 1.12-1.41 (dockerd 20.10's newest), since the suite sends unversioned requests.
set -euo pipefail
src=${1:?usage: dockerode-suite.sh DOCKERODE_CHECKOUT}
here="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="/usr/local/bin:$PATH"
work=$(mktemp -d /tmp/dockgate-dockerode-XXXXXX)
cp -r "$src/." "$work/suite"
(cd "$work/suite" && npm install --no-audit --no-fund --silent)

# The `ubuntu` stand-in: busybox with every applet, and bash.
mkdir -p "$work/fx/bin" "$work/fx/lib"
cp /bin/bash "$work/fx/bin/"
for lib in $(ldd /bin/bash | grep -o '/[^ ]*'); do mkdir -p "$work/fx/lib$(dirname "$lib")"; cp "$lib" "$work/fx/lib$lib"; done
cat > "$work/fx/Dockerfile" <<'DOCKERFILE'
FROM busybox:local
COPY bin/bash /bin/bash
COPY lib/ /
RUN /bin/busybox --install -s /bin
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["/bin/bash"]
DOCKERFILE
DOCKER_BUILDKIT=0 docker build -q -t ubuntu:latest "$work/fx" >/dev/null
docker save ubuntu:latest -o "$work/ubuntu.tar"

run() { # name, then env for the suite
  local name=$1; shift
  (cd "$work/suite" && env "$@" timeout 1200 ./node_modules/mocha/bin/mocha.js -R json -O "output=$work/$name.json" --exit test/*.js >"$work/$name.log" 2>&1) || true
}
run dockerd DOCKER_SOCKET=
(cd "$here" && npm run build --silent && npm run build:demo --silent)
node "$here/demo/dist/start.cjs" --port 5099 --engine-socket "$work/engine.sock" --state-dir "$work/state" --api-range 1.12-1.41 --log-level warn >"$work/demo.log" 2>&1 &
demo=$!
trap 'kill $demo 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do [ -S "$work/engine.sock" ] && break; sleep 1; done
DOCKER_HOST="unix://$work/engine.sock" docker load -q -i "$work/ubuntu.tar" >/dev/null
# spec_helper.js uses /var/run/docker.sock unless DOCKER_SOCKET is set; then it reads DOCKER_HOST.
run dockgate DOCKER_SOCKET=none DOCKER_HOST="unix://$work/engine.sock"
node - "$work" <<'NODE'
const dir = process.argv[2];
const read = (n) => require(`${dir}/${n}.json`);
const [d, g] = [read('dockerd'), read('dockgate')];
for (const [name, r] of [['dockerd', d], ['dockgate', g]]) console.log(`${name}: ${r.stats.passes} passed, ${r.stats.failures} failed, ${r.stats.pending} pending of ${r.stats.tests}`);
const passed = new Set(d.passes.map((t) => t.fullTitle));
for (const f of g.failures) if (passed.has(f.fullTitle)) console.log(`differs: ${f.fullTitle} -- ${String(f.err.message ?? '').split('\n')[0].slice(0, 160)}`);
console.log(`results in ${dir}`);
NODE
