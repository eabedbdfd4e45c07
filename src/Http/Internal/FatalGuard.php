<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

/**
 * The last word of a worker that dies with requests in flight: a fatal error in one handler (undefined
 * function, memory exhausted, E_USER_ERROR), an exit() in a handler, or a crash of the loop ends the
 * process, and with it every request its other Fibers were serving. Without this, those clients would
 * see a bare close. On shutdown, every connection whose response has not started gets a short
 * `500 Internal Server Error` with `Connection: close` (blocking writes, bounded in time); a response
 * already under way is cut, which is the only honest signal left. The fatal error is logged. The
 * supervisor replaces the worker as it does any worker that exits.
 *
 * @internal
 */
final class FatalGuard
{
    private const FATAL = E_ERROR | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR | E_PARSE;

    private const RESPONSE = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain; charset=utf-8\r\n"
        . "Content-Length: 26\r\nConnection: close\r\n\r\n500 Internal Server Error\n";

    /** How long the shutdown may spend writing, over all connections (seconds). */
    private const BUDGET = 2.0;

    /** Released first thing at shutdown so that a worker out of memory can still run this. */
    private ?string $reserve;

    private readonly int $pid;

    private function __construct(private readonly HttpCore $core)
    {
        $this->reserve = str_repeat("\0", 256 * 1024);
        $this->pid = getmypid() ?: 0;
    }

    /** Call once per worker, when the HTTP service starts. */
    public static function install(HttpCore $core): void
    {
        register_shutdown_function((new self($core))->shutdown(...));
    }

    private function shutdown(): void
    {
        if ($this->reserve === null) {
            return; // Ran already.
        }
        $this->reserve = null;
        if ((getmypid() ?: 0) !== $this->pid) {
            return; // A process forked by a handler must not answer its parent's clients.
        }
        $error = error_get_last();
        $fatal = $error !== null && ($error['type'] & self::FATAL) !== 0;
        if ($fatal) {
            self::raiseMemoryLimit();
        }
        [$answered, $cut] = $this->answerInFlight();
        if (!$fatal && $answered + $cut === 0) {
            return;
        }
        $cause = $fatal ? "fatal error: {$error['message']} in {$error['file']}:{$error['line']}" : 'worker exited';
        $this->core->log('error', "$cause; answered $answered in-flight request(s) with 500"
            . ($cut > 0 ? ", cut $cut response(s) already under way" : ''));
        $this->core->flushLogs();
    }

    /** @return array{int, int} connections answered with 500, connections closed mid-response */
    private function answerInFlight(): array
    {
        $answered = 0;
        $cut = 0;
        $deadline = microtime(true) + self::BUDGET;
        foreach ($this->core->connections as $connection) {
            if ($connection->state !== ConnectionState::Responding) {
                continue; // Idle or still reading: a close is what a keep-alive client expects anyway.
            }
            if ($connection->responseStarted || $connection->output->pending() > 0) {
                $cut++;
            } elseif (self::answer($connection->socket, $deadline)) {
                $answered++;
            }
            @fclose($connection->socket);
        }
        return [$answered, $cut];
    }

    /** @param resource $socket */
    private static function answer(mixed $socket, float $deadline): bool
    {
        $left = $deadline - microtime(true);
        if ($left <= 0 || !\is_resource($socket)) {
            return false;
        }
        stream_set_blocking($socket, true);
        stream_set_timeout($socket, (int) $left, (int) (fmod($left, 1.0) * 1e6));
        $written = @fwrite($socket, self::RESPONSE);
        if ($written !== \strlen(self::RESPONSE)) {
            return false;
        }
        // Half-close and take what the client already sent, so the close does not turn into a reset
        // that could destroy the answer before the client reads it.
        @stream_socket_shutdown($socket, STREAM_SHUT_WR);
        stream_set_blocking($socket, false);
        for ($i = 0; $i < 16; $i++) {
            $data = @fread($socket, 65536);
            if ($data === false || $data === '') {
                break;
            }
        }
        return true;
    }

    /** Some room over what the dying handler took, for logging; never lowers the limit. */
    private static function raiseMemoryLimit(): void
    {
        $limit = ini_get('memory_limit');
        if ($limit === false || $limit === '' || $limit === '-1') {
            return;
        }
        $wanted = memory_get_usage(true) + (16 << 20);
        if (@ini_parse_quantity($limit) < $wanted) {
            @ini_set('memory_limit', (string) $wanted);
        }
    }
}
