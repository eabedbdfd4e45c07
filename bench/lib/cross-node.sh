# shellcheck shell=bash
# `bench/run state`, last part: cross-node publish latency. One redis-server and two Kiln nodes of
# examples/realtime/app.php (2 workers each, --redis); bench/lib/cross-node.php puts the room's members on node B
# and publishes through node A. Sourced by bench/run (free_port, start_kiln, log, alive, STARTED, T, RESULTS).
#
#   BENCH_CROSS_NODE ["100 200 50"]   members, messages, messages per second

mode_cross_node() {
    local args=${BENCH_CROSS_NODE:-100 200 50} port dir pid i out
    port=$(free_port)
    dir=$T/redis-cross
    mkdir -p "$dir"
    setsid redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" --daemonize no \
        --logfile "$dir/redis.log" --protected-mode no &
    pid=$!
    STARTED+=("$pid")
    for i in $(seq 1 100); do redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && break; alive "$pid" || break; sleep 0.1; done
    redis-cli -p "$port" PING 2>/dev/null | grep -q PONG || { log "redis-server did not start: $(tail -3 "$dir/redis.log")"; exit 1; }
    KILN_APP=examples/realtime/app.php KILN_URL_PATH=/ start_kiln node-a -- "--redis=redis://127.0.0.1:$port" || { log "node A: $REASON"; exit 1; }
    KILN_APP=examples/realtime/app.php KILN_URL_PATH=/ start_kiln node-b -- "--redis=redis://127.0.0.1:$port" || { log "node B: $REASON"; exit 1; }
    local a=${URL[node-a]#http://127.0.0.1:} b=${URL[node-b]#http://127.0.0.1:}
    log "cross-node publish: members on node B, published through node A ($args: members, messages, per second)"
    # shellcheck disable=SC2086
    out=$(php "$BENCH/lib/cross-node.php" "${a%%/*}" "${b%%/*}" $args) || { log "bench/lib/cross-node.php failed: $out"; exit 1; }
    read -r p50 p99 max delivered expected <<<"$out"
    {
        printf '## %s: bench/run state (cross-node publish)\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
        printf '`%s` on %s (%s cores, load %s at the end). redis-server %s; two nodes of examples/realtime/app.php, %s workers each, `--redis`.\n\n' \
            "$COMMAND" "$(uname -n)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(redis-server --version | awk '{print $3}')" "$KILN_WORKERS"
        printf '| members on node B | messages through node A | delivered / expected | p50 ms | p99 ms | max ms |\n|---:|---:|---:|---:|---:|---:|\n'
        printf '| %s | %s | %s / %s | %s | %s | %s |\n\n' "${args%% *}" "$(awk '{print $2}' <<<"$args")" "$delivered" "$expected" "$p50" "$p99" "$max"
        printf 'Latency: from the POST to node A leaving the client to each member on node B reading the message (the HTTP request, Redis pub/sub and the WebSocket frame).\n'
    } >"$T/cross-node.md"
    cat "$T/cross-node.md"
    [ -n "$RESULTS" ] && { printf '\n' >>"$RESULTS"; cat "$T/cross-node.md" >>"$RESULTS"; log "appended to $RESULTS"; }
}
