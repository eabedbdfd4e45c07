# shellcheck shell=bash
# `bench/run ws`: WebSocket echo, idle connections and room broadcast, Kiln against Workerman's WebSocket
# server (../shared/peers/workerman/ws.php, Kiln's PHP settings) and node's `ws` (bench/peers/node-ws.js).
# Sourced by bench/run, whose helpers it uses (start_kiln, free_port, tree_cpu_ms, tree_rss_kib, meta, log...).
#
#   BENCH_WS_STACKS ["kiln-ws workerman-ws node-ws"]   echo stacks
#   BENCH_WS_ECHO ["64 16 32"]   connections, messages in flight per connection, message bytes
#   BENCH_WS_IDLE [10000]        idle WebSocket connections held on Kiln ("0" skips)
#   BENCH_WS_IDLE_SECONDS [60]   how long they are held
#   BENCH_WS_BROADCAST ["1000 200 20"]  room members, messages, messages per second ("" skips)

WSBENCH=""
declare -A WSPORT WSECHO WSROOM

build_wsbench() {
    command -v cc >/dev/null || { log "cc is not installed (apt-get install gcc)"; exit 1; }
    cc -O2 -o "$T/wsbench" "$BENCH/lib/wsbench.c" || { log "cannot build bench/lib/wsbench.c"; exit 1; }
    WSBENCH=$T/wsbench
}

node_ws_modules() { # the npm ws package, as the tests install it (scripts/install-deps.sh dev)
    local d=$ROOT/tests/Fixtures/websocket/node
    if [ ! -d "$d/node_modules/ws" ] && command -v npm >/dev/null; then
        (cd "$d" && npm install --no-audit --no-fund --silent) >>"$T/apt.log" 2>&1
    fi
    [ -d "$d/node_modules/ws" ] && echo "$d/node_modules"
}

wait_port() { # wait_port NAME PORT LOG PID: until the port accepts a connection
    local name=$1 port=$2 logf=$3 pid=$4 i
    for i in $(seq 1 $((READY_TIMEOUT * 5))); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        alive "$pid" || { REASON="$name exited during startup: $(tail -3 "$logf" 2>/dev/null | tr '\n' ' ' | cut -c1-300)"; return 1; }
        sleep 0.2
    done
    REASON="$name did not listen on 127.0.0.1:$port within ${READY_TIMEOUT}s"
    return 1
}

start_ws_stack() { # start_ws_stack NAME: WSPORT/WSECHO/WSROOM and PIDS set, or 1 and REASON
    local name=$1 port d opts=() modules
    case $name in
    kiln-ws)
        KILN_APP=examples/realtime/app.php KILN_URL_PATH=/ start_kiln kiln-ws || return 1
        port=${URL[kiln-ws]#http://127.0.0.1:}
        WSPORT[$name]=${port%%/*} WSECHO[$name]=/ws/echo WSROOM[$name]=/ws/rooms/bench
        ;;
    workerman-ws | workerman-ws-1)
        [ -f "$WORKERMAN/ws.php" ] || { REASON="Workerman not found at $WORKERMAN"; return 1; }
        port=$(free_port) || { REASON="no free port"; return 1; }
        d=$T/$name
        mkdir -p "$d/run" "$d/log"
        mapfile -t opts < <(workerman_php_settings)
        local count=$KILN_WORKERS
        [ "$name" = workerman-ws-1 ] && count=1 # its rooms are per process: one process for the broadcast
        WM_WS_PORT=$port WM_RUN=$d/run WM_LOG=$d/log WM_COUNT=$count \
            setsid php "${opts[@]}" "$WORKERMAN/ws.php" start >"$d/stdout.log" 2>&1 </dev/null &
        PIDS[$name]=$!
        STARTED+=("${PIDS[$name]}")
        wait_port "$name" "$port" "$d/stdout.log" "${PIDS[$name]}" || return 1
        WSPORT[$name]=$port WSECHO[$name]=/echo WSROOM[$name]=/room
        meta "$name" "Workerman ($(grep -o 'JIT o[nf]*' "$d/stdout.log" | head -1)), ../shared/peers/workerman/ws.php, $count worker(s), php $(printf '%s ' "${opts[@]}" | sed 's/ $//')"
        ;;
    node-ws)
        command -v node >/dev/null || { REASON="node is not installed"; return 1; }
        modules=$(node_ws_modules) || { REASON="the npm ws package is missing (scripts/install-deps.sh dev)"; return 1; }
        port=$(free_port) || { REASON="no free port"; return 1; }
        d=$T/$name
        mkdir -p "$d"
        NODE_PATH=$modules setsid node "$BENCH/peers/node-ws.js" "$port" >"$d/stdout.log" 2>&1 </dev/null &
        PIDS[$name]=$!
        STARTED+=("${PIDS[$name]}")
        wait_port "$name" "$port" "$d/stdout.log" "${PIDS[$name]}" || return 1
        WSPORT[$name]=$port WSECHO[$name]=/echo WSROOM[$name]=/room
        meta "$name" "node $(node --version) + ws $(node -p "require('$modules/ws/package.json').version"), one process, perMessageDeflate off"
        ;;
    *) REASON="unknown stack"; return 1 ;;
    esac
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

mode_ws() {
    local stacks=${BENCH_WS_STACKS:-kiln-ws workerman-ws node-ws} s rep out cpu0 cpu1 up=()
    local echo_args=${BENCH_WS_ECHO:-64 16 32} idle=${BENCH_WS_IDLE:-10000} idle_seconds=${BENCH_WS_IDLE_SECONDS:-60}
    local broadcast=${BENCH_WS_BROADCAST-1000 200 20}
    install_missing kiln-ws $stacks
    build_wsbench
    raise_nofile $((idle + 4096))
    : >"$DATA/ws-echo.tsv"
    for s in $stacks; do
        log "starting $s"
        if start_ws_stack "$s"; then up+=("$s"); else unavailable "$s" "$REASON"; fi
    done
    record_meta idle kiln-ws # ("idle": no wrk line)
    local e_conns e_flight e_size
    read -r e_conns e_flight e_size <<<"$echo_args"
    meta "wsbench" "bench/lib/wsbench.c (cc -O2), one thread, epoll; echo: $e_conns connections × $e_flight messages in flight × $e_size bytes, ${DURATION}s per run, ${WARMUP}s warm-up, $REPS reps interleaved"
    for s in "${up[@]}"; do # warm-up: the JIT of each PHP stack compiles its hot path first
        "$WSBENCH" echo 127.0.0.1 "${WSPORT[$s]}" "${WSECHO[$s]}" $echo_args "$WARMUP" >/dev/null 2>&1
    done
    for rep in $(seq 1 "$REPS"); do
        for s in "${up[@]}"; do
            cpu0=$(tree_cpu_ms ${PIDS[$s]})
            # shellcheck disable=SC2086
            out=$("$WSBENCH" echo 127.0.0.1 "${WSPORT[$s]}" "${WSECHO[$s]}" $echo_args "$DURATION" 2>&1)
            cpu1=$(tree_cpu_ms ${PIDS[$s]})
            local rate msgs errs
            rate=$(sed -n 's/.* rate=\([0-9]*\).*/\1/p' <<<"$out")
            msgs=$(sed -n 's/.* messages=\([0-9]*\).*/\1/p' <<<"$out")
            errs=$(sed -n 's/.* errors=\([0-9]*\).*/\1/p' <<<"$out")
            log "$s rep $rep: $out"
            [ -n "$rate" ] && printf '%s\t%s\t%s\t%s\t%s\n' "$s" "$rep" "$rate" \
                "$(awk -v ms=$((cpu1 - cpu0)) -v n="$msgs" 'BEGIN { if (n > 0) printf "%.1f", ms * 1000 / n }')" "${errs:-?}" >>"$DATA/ws-echo.tsv"
        done
    done

    local idle_line="" rss0 rss1
    if [ "$idle" -gt 0 ] && [ -n "${PIDS[kiln-ws]:-}" ]; then
        log "holding $idle idle WebSocket connections on kiln-ws for ${idle_seconds}s"
        rss0=$(tree_rss_kib ${PIDS[kiln-ws]})
        "$WSBENCH" idle 127.0.0.1 "${WSPORT[kiln-ws]}" /ws/echo "$idle" "$idle_seconds" >"$T/idle.out" 2>"$T/idle.err" &
        local client=$! i
        HELPERS+=("$client")
        for i in $(seq 1 600); do grep -q '^established' "$T/idle.err" && break; alive $client || break; sleep 0.2; done
        sleep 2
        rss1=$(tree_rss_kib ${PIDS[kiln-ws]})
        wait $client
        [ -s "$T/idle.out" ] || echo "mode=idle connections=$idle failed=$(tr '\n' ' ' <"$T/idle.err" | cut -c1-200)" >"$T/idle.out"
        idle_line="$(cat "$T/idle.out") rss_before_kib=$rss0 rss_held_kib=$rss1 kib_per_connection=$(awk -v a="$rss0" -v b="$rss1" -v n="$idle" 'BEGIN { printf "%.2f", (b - a) / n }')"
        log "idle: $idle_line $(head -c 300 "$T/idle.err")"
    fi

    local bc_lines=()
    if [ -n "$broadcast" ]; then
        local members messages per_second
        read -r members messages per_second <<<"$broadcast"
        for s in kiln-ws workerman-ws-1 node-ws; do
            if [ -z "${WSPORT[$s]:-}" ]; then
                start_ws_stack "$s" || { unavailable "$s" "$REASON"; continue; }
            fi
            out=$("$WSBENCH" broadcast 127.0.0.1 "${WSPORT[$s]}" "${WSROOM[$s]}" "$members" "$messages" "$per_second" 2>&1)
            log "$s broadcast: $out"
            bc_lines+=("$s $out")
        done
    fi

    php "$BENCH/lib/ws-report.php" "$DATA" "$COMMAND" "$idle_line" "${bc_lines[@]}" >"$T/ws.md"
    cat "$T/ws.md"
    [ -n "$RESULTS" ] && { printf '\n' >>"$RESULTS"; cat "$T/ws.md" >>"$RESULTS"; log "appended to $RESULTS"; }
}
