#!/usr/bin/env bash
# Requests lost to reloads: Kiln behind nginx, whose upstream keeps connections to Kiln open and sends on them
# (keepalive 32), with wrk POSTing through nginx while Kiln is reloaded (SIGHUP) every second. nginx sends a
# failed request again on another connection only when it may (an idempotent one): a POST whose kept connection
# Kiln closes under it is a 502. Prints wrk's request count, its non-2xx count (the 502s) and nginx's error lines.
#
#   bench/reload.sh [SECONDS [CONNECTIONS]]     defaults: 10 s, 16 connections; one reload a second after the first
#
# Not a speed measurement: it counts failures, so it may run beside other work. Everything it starts (Kiln,
# nginx, wrk) is stopped by PID; its files live in a mktemp -d directory removed at the end.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SECONDS_TOTAL=${1:-10}
CONNECTIONS=${2:-16}
for tool in nginx wrk curl; do
    command -v $tool >/dev/null || [ -x /usr/sbin/$tool ] || { echo "bench/reload.sh: $tool is not installed (apt-get install $tool)" >&2; exit 1; }
done
T=$(mktemp -d)
KILN_PID='' NGINX_PID=''
cleanup() {
    [ -n "$NGINX_PID" ] && kill -QUIT "$NGINX_PID" 2>/dev/null
    [ -n "$KILN_PID" ] && kill -TERM -- "-$KILN_PID" 2>/dev/null
    sleep 1
    rm -rf "$T"
}
trap cleanup EXIT
port() { php -r 'for ($i = 0; $i < 500; $i++) { $p = random_int(20000, 32000); $s = @stream_socket_server("tcp://127.0.0.1:$p"); if ($s) { fclose($s); echo $p; exit(0); } } exit(1);'; }
KILN_PORT=$(port) && FRONT_PORT=$(port) || { echo "bench/reload.sh: no free port" >&2; exit 1; }

setsid php "$ROOT/bin/kiln" serve "$ROOT/bench/apps/post.php" --listen="127.0.0.1:$KILN_PORT" --workers=2 >"$T/kiln.log" 2>&1 </dev/null &
KILN_PID=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$KILN_PORT/ready" && break; sleep 0.1; done
curl -sf -o /dev/null "http://127.0.0.1:$KILN_PORT/ready" || { echo "bench/reload.sh: Kiln did not start: $(tail -3 "$T/kiln.log")" >&2; exit 1; }
SUPERVISOR=$(ss -ltnpH "sport = :$KILN_PORT" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -n | head -1)

mkdir -p "$T/nginx"
cat >"$T/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log;
daemon off;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $T/nginx/body;
    proxy_temp_path $T/nginx/proxy;
    upstream kiln { server 127.0.0.1:$KILN_PORT; keepalive 32; }
    server {
        listen 127.0.0.1:$FRONT_PORT;
        location / { proxy_pass http://kiln; proxy_http_version 1.1; proxy_set_header Connection ""; }
    }
}
CONF
setsid nginx -c "$T/nginx/nginx.conf" -p "$T/nginx" >"$T/nginx.out" 2>&1 </dev/null &
NGINX_PID=$!
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$FRONT_PORT/ready" && break; sleep 0.1; done

cat >"$T/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = "a=1&b=2"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
LUA
(for _ in $(seq 1 $((SECONDS_TOTAL - 2))); do sleep 1; kill -HUP "$SUPERVISOR"; done) &
RELOADS=$!
wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_TOTAL}s" -s "$T/post.lua" "http://127.0.0.1:$FRONT_PORT/post" >"$T/wrk.out" 2>&1
wait "$RELOADS"
requests=$(awk '/requests in/ {print $1}' "$T/wrk.out")
failed=$(awk '/Non-2xx/ {print $NF}' "$T/wrk.out")
echo "$(date -u '+%F %H:%M') $(git -C "$ROOT" rev-parse --short HEAD): ${requests:-?} POSTs in ${SECONDS_TOTAL} s through nginx, $(grep -c 'reloaded: generation' "$T/kiln.log") reloads," \
    "${failed:-0} failed (non-2xx), nginx error lines: $(grep -c . "$T/nginx/error.log" 2>/dev/null || true)"
