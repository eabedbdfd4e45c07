# shellcheck shell=bash
# `bench/run state`: shared state. The node-local part (bench/lib/state-local.php): Kiln's Store on APCu against
# raw APCu calls in one process, interleaved, in the same run (bar: >= 0.5x for get, set and increment), with the
# /dev/shm table for scale. When bench/lib/redis.sh is there, its part (Kiln's Redis client against
# redis-benchmark) runs after it in the same mode, then the cross-node publish latency (bench/lib/cross-node.sh).
# Sourced by bench/run, whose helpers it uses (log, T, REPS, DURATION, RESULTS, COMMAND, BENCH, ROOT).

#   BENCH_STATE_PARTS ["local redis cross-node"]   which parts run
mode_state() {
    local jit out parts=" ${BENCH_STATE_PARTS:-local redis cross-node} "
    if [[ $parts != *" local "* ]]; then
        mode_state_rest "$parts"
        return
    fi
    php -r 'exit(extension_loaded("apcu") ? 0 : 1);' || { log "ext-apcu is not installed (apt-get install php8.2-apcu)"; exit 1; }
    # The PHP settings Kiln's workers get (opcache, tracing JIT, apc.enable_cli=1).
    jit=$(php -r 'require $argv[1]; foreach (Kiln\Cli\JitLauncher::SETTINGS as $k => $v) echo "-d$k=$v ";' "$BENCH/lib/autoload.php")
    log "node-local Store vs raw APCu: ${DURATION}s per operation and stack, $REPS interleaved reps"
    # shellcheck disable=SC2086
    out=$(php $jit "$BENCH/lib/state-local.php" "$DURATION" "$REPS") || { log "bench/lib/state-local.php failed: $out"; exit 1; }
    {
        printf '## %s: bench/run state (node-local)\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
        printf '`%s` on %s (%s cores, load %s at the end). One process, 1,024 keys, median of %s interleaved runs.\n\n' \
            "$COMMAND" "$(uname -n)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$REPS"
        printf '%s\n' "$out"
    } >"$T/state.md"
    cat "$T/state.md"
    [ -n "$RESULTS" ] && { printf '\n' >>"$RESULTS"; cat "$T/state.md" >>"$RESULTS"; log "appended to $RESULTS"; }
    mode_state_rest "$parts"
}

mode_state_rest() { # the Redis client, then the cross-node publish latency, as $1 asks
    if [[ $1 == *" redis "* ]] && [ -f "$BENCH/lib/redis.sh" ]; then
        # shellcheck source=/dev/null
        . "$BENCH/lib/redis.sh"
        mode_redis
    fi
    if [[ $1 == *" cross-node "* ]]; then
        # shellcheck source=bench/lib/cross-node.sh
        . "$BENCH/lib/cross-node.sh"
        mode_cross_node
    fi
}
