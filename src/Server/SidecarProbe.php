<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * Whether a sidecar that is up still answers (SidecarSpec::$probe): every EVERY seconds the supervisor sends
 * the probe on a fresh connection to its socket and looks for an answer at each turn of its loop, never
 * waiting on it. A socket that accepts connections proves nothing: the kernel queues them in the listen
 * backlog whether or not the process ever takes one (a php-cgi parent that forks children which exit at
 * once, a frozen process). So only bytes back count, and a member that sent none for the spec's timeout
 * has stopped answering. The timeout is long enough for a member busy with long requests to take the probe
 * in its turn.
 */
final class SidecarProbe
{
    public const EVERY = 5.0;

    /** Starts probing a member that just came up. */
    public static function start(SidecarProcess $process, float $now): void
    {
        $process->probeAt = $process->set->spec->probe === '' ? INF : $now + self::EVERY;
    }

    /** One turn: sends a probe when due, reads an answer; false when the member has stopped answering. */
    public static function check(SidecarProcess $process, float $now): bool
    {
        if ($process->probe !== null) {
            $answer = @fread($process->probe, 8192);
            $closed = $answer === false || ($answer === '' && feof($process->probe));
            if ($answer !== '' && $answer !== false) {
                $process->silentSince = null; // answered: the next probe in EVERY seconds
                self::stop($process);
                $process->probeAt = $now + self::EVERY;
            } elseif ($closed) {
                self::stop($process); // closed without a word: the next probe soon, still counted silent
                $process->probeAt = $now + 0.5;
            }
        } elseif ($now >= $process->probeAt) {
            $process->silentSince ??= $now;
            $connection = @stream_socket_client('unix://' . $process->socket, $errno, $error, 0.0, STREAM_CLIENT_CONNECT | STREAM_CLIENT_ASYNC_CONNECT);
            if ($connection === false) {
                $process->probeAt = $now + 0.5; // the backlog is full, or the socket gone: try again, still counted silent
            } else {
                stream_set_blocking($connection, false);
                @fwrite($connection, $process->set->spec->probe);
                $process->probe = $connection;
                $process->probeAt = INF;
            }
        }
        return $process->silentSince === null || $now - $process->silentSince < $process->set->spec->probeTimeout;
    }

    /** When check() should next run for this member. */
    public static function nextAt(SidecarProcess $process): float
    {
        return $process->probe !== null ? microtime(true) + 0.1 : $process->probeAt;
    }

    /** Closes the probe in flight, if any (the member ends, or answered). */
    public static function stop(SidecarProcess $process): void
    {
        if ($process->probe !== null) {
            @fclose($process->probe);
            $process->probe = null;
        }
    }
}
