#!/usr/bin/env bash
# Installs the system packages the tests and benchmarks use, when they are missing:
#   nginx     test/nginx.test.ts runs the shipped proxy config (deploy/nginx) end to end
#   wrk       HTTP load generator for the benchmarks
#   chromium  test/home-page.test.ts loads the page at / in headless Chromium (puppeteer-core,
#             which downloads no browser of its own, drives /usr/bin/chromium)
#   cc        bench:freshness compiles bench/fanout-client.c (its 1,000 subscribers, read with
#             epoll); without it the bench falls back to Node sockets and says so
#   libfaketime  test/clock-step.test.ts steps the wall clock of a service process (LD_PRELOAD)
#   redis-server  replica mode (REDIS_URL): the store and replica tests start their own
#   libjemalloc2  the allocator deploy/wires.service preloads; test/main.test.ts starts the
#             service on it, and bench:soak runs on it
#   haproxy   bench:scale-out measures it beside nginx as the alternative front
#   openssl   test/tls.test.ts and bench:scale-out make their certificates with it
# Idempotent: does nothing when all are present. Debian/Ubuntu (apt-get); run as root or
# with sudo available. Usable from .ci/run: `bash scripts/install-system-deps.sh`.
set -euo pipefail

missing=()
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || missing+=(nginx)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
[ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 ] || missing+=(libfaketime)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
[ -e /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 ] || missing+=(libjemalloc2)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-system-deps: nginx, wrk, chromium, cc, libfaketime, redis-server, libjemalloc2, haproxy and openssl present"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-system-deps: missing ${missing[*]} and no apt-get; install them by hand" >&2
  exit 1
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=(sudo); else
    echo "install-system-deps: missing ${missing[*]}; run as root to install them" >&2
    exit 1
  fi
fi

# Keep the package scripts from starting the distribution's nginx service (it would take
# port 80); the tests run their own nginx. Only when no policy is in place already.
policy=/usr/sbin/policy-rc.d
added_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null
  "${SUDO[@]}" chmod 0755 "$policy"
  added_policy=1
fi
cleanup() { if [ "$added_policy" = 1 ]; then "${SUDO[@]}" rm -f "$policy"; fi; }
trap cleanup EXIT

echo "install-system-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
/usr/sbin/nginx -v
command -v wrk
/usr/bin/chromium --version
command -v cc
redis-server --version
