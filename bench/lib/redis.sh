# shellcheck shell=bash
# `bench/run redis`: Redis commands/s through Kiln's own client (bench/lib/redis-client.php: 64 Fibers sharing one
# pipelined connection, each looping SET then GET) against Debian's `redis-benchmark -P 16` (SET and GET, its
# default 50 clients, 16 commands per pipeline), on one redis-server started here, interleaved, in the same run.
# Sourced by bench/run, whose helpers it uses (free_port, log, alive, STARTED, T, REPS, DURATION, RESULTS).
#
#   BENCH_REDIS_FIBERS [64]   Fibers of the Kiln client        BENCH_REDIS_POOL [1]   its connections
#   BENCH_REDIS_REQUESTS [1000000]  requests per redis-benchmark test

mode_redis() {
    local fibers=${BENCH_REDIS_FIBERS:-64} pool=${BENCH_REDIS_POOL:-1} requests=${BENCH_REDIS_REQUESTS:-1000000}
    local need=()
    [ -x /usr/bin/redis-server ] || need+=(redis-server)
    command -v redis-benchmark >/dev/null || need+=(redis-tools)
    if [ ${#need[@]} -gt 0 ]; then
        if [ "${BENCH_NO_INSTALL:-0}" = 1 ]; then log "missing: ${need[*]} (BENCH_NO_INSTALL=1)"; exit 1; fi
        log "installing ${need[*]}"
        apt-get install -y -qq "${need[@]}" >>"$T/apt.log" 2>&1 || { log "cannot install ${need[*]}"; exit 1; }
    fi
    local port dir pid jit
    port=$(free_port)
    dir=$T/redis
    mkdir -p "$dir"
    setsid redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" --daemonize no \
        --logfile "$dir/redis.log" --protected-mode no &
    pid=$!
    STARTED+=("$pid")
    local i
    for i in $(seq 1 100); do redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && break; alive "$pid" || break; sleep 0.1; done
    redis-cli -p "$port" PING 2>/dev/null | grep -q PONG || { log "redis-server did not start: $(tail -3 "$dir/redis.log")"; exit 1; }
    # The client runs with the PHP settings Kiln's workers get (opcache + tracing JIT).
    jit=$(php -r 'require $argv[1]; foreach (Kiln\Cli\JitLauncher::SETTINGS as $k => $v) echo "-d$k=$v ";' "$BENCH/lib/autoload.php")
    log "redis-server $(redis-server --version | awk '{print $3}') on port $port; Kiln client: $fibers Fibers, pool $pool, ${DURATION}s; redis-benchmark -P 16, $requests requests"

    local rep kiln_runs=() kiln_cpu=() peer_runs=() out set get rate
    for rep in $(seq 1 "$REPS"); do
        # shellcheck disable=SC2086
        out=$(php $jit "$BENCH/lib/redis-client.php" "$port" "$fibers" "$DURATION" "$pool") || { log "Kiln client failed: $out"; exit 1; }
        rate=${out%% *}
        kiln_runs+=("$rate")
        kiln_cpu+=("$(awk '{ print $4 }' <<<"$out")")
        log "rep $rep kiln-client: $rate commands/s, $(awk '{ print $4 }' <<<"$out") µs client CPU per command"
        out=$(redis-benchmark -h 127.0.0.1 -p "$port" -P 16 -n "$requests" -t set,get --csv 2>/dev/null)
        set=$(awk -F'","' '/^"SET"/ { print $2 + 0 }' <<<"$out")
        get=$(awk -F'","' '/^"GET"/ { print $2 + 0 }' <<<"$out")
        rate=$(awk -v s="$set" -v g="$get" 'BEGIN { if (s > 0 && g > 0) printf "%.0f", 2 / (1 / s + 1 / g); else print 0 }')
        peer_runs+=("$rate")
        log "rep $rep redis-benchmark -P 16: SET $set GET $get, $rate commands/s (SET and GET in equal numbers)"
    done
    local kiln_median peer_median ratio
    kiln_median=$(printf '%s\n' "${kiln_runs[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    peer_median=$(printf '%s\n' "${peer_runs[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    ratio=$(awk -v k="$kiln_median" -v p="$peer_median" 'BEGIN { printf "%.2f", (p > 0 ? k / p : 0) }')
    {
        printf '## %s: bench/run redis\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
        printf '`%s` on %s (%s cores, load %s at the end). Median of %s interleaved runs.\n\n' "$COMMAND" "$(uname -n)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$REPS"
        printf '| client | commands/s (median) | runs | vs redis-benchmark |\n|---|---:|---|---:|\n'
        printf '| Kiln RedisClient, %s Fibers, pool %s (SET+GET) | %s | %s | %s× |\n' "$fibers" "$pool" "$kiln_median" "${kiln_runs[*]}" "$ratio"
        printf '| redis-benchmark -P 16 (SET, GET; harmonic mean) | %s | %s | 1.00× |\n\n' "$peer_median" "${peer_runs[*]}"
        printf 'Client CPU (user + system) per command, each run: %s µs.\n\n' "${kiln_cpu[*]}"
        printf 'Bar: Kiln client >= 0.5x redis-benchmark -P 16: %s.\n' "$(awk -v r="$ratio" 'BEGIN { print (r >= 0.5 ? "met" : "NOT met") }')"
    } >"$T/redis.md"
    cat "$T/redis.md"
    [ -n "$RESULTS" ] && { printf '\n' >>"$RESULTS"; cat "$T/redis.md" >>"$RESULTS"; log "appended to $RESULTS"; }
}
