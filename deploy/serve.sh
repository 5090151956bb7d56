#!/bin/bash
# Runs the service (dist/src/main.js) as the systemd units start it, with one line kept out of
# its log.
#
# Every line the service writes to stderr is JSON but one: uWebSockets.js 20.57 prints
# "Warning: uWS.HttpResponse writes must be made from within a corked callback..." for each
# stream paid in its upgrade request whose payment waited on the network (src/http/stream.ts
# says why that upgrade is not corked). This drops exactly that line and passes every other
# byte on, in order:
# - exec: node becomes this process, so the main PID, the signals and the exit status are its own;
# - the filter ignores SIGTERM, SIGINT and SIGHUP: systemd signals every process of a unit it
#   stops, and the filter reads on until node has written its last line and exited.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
warning='Warning: uWS.HttpResponse writes must be made from within a corked callback. See documentation for uWS.HttpResponse.cork and consult the user manual.'
exec node "$here/../dist/src/main.js" "$@" 2> >(
  trap '' TERM INT HUP
  LC_ALL=C exec grep --line-buffered -a -v -x -F -e "$warning" >&2
)
