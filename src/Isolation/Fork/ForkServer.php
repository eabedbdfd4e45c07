<?php

declare(strict_types=1);

namespace Kiln\Isolation\Fork;

use Kiln\Isolation\Fork\Internal\ChildStdio;
use Kiln\Isolation\Fork\Internal\ChildTable;
use Kiln\Isolation\Fork\Internal\ServerConnection;

/**
 * The fork server: a small PHP process (it loads only the Kiln autoloader and its ForkChild) that accepts
 * SCGI requests on a unix socket and forks a child per request; the child's fd 1 is the connection, so
 * its CGI response goes straight to the client and the server never copies it. One request per
 * connection: the response ends when the child (and the server's copy of the socket) is gone.
 *
 * - At most $maxChildren children: one more request gets `Status: 503` (with Retry-After) from the server.
 * - A child runs in its own process group. Past $timeLimit, or as soon as the client closes its end, the
 *   group gets SIGTERM, then SIGKILL after $killGrace. Children are reaped on SIGCHLD (no zombies); a
 *   child ended by a signal the server did not send is logged to stderr.
 * - A child also gets alarm(timeLimit + 2·killGrace + 1): it dies on its own if the server is gone.
 * - EOF on $control (the worker's pipe) or SIGTERM/SIGINT: children are stopped the same way, then run()
 *   returns.
 */
final class ForkServer
{
    /** The listening socket's accept queue (the kernel caps it at net.core.somaxconn). */
    public const BACKLOG = 1024;

    /**
     * Connections held at once; the rest wait in the accept queue. Each is a descriptor (and a body past 1 MiB one
     * more), and stream_select() fails for every stream once one descriptor passes 1024.
     */
    public const MAX_CONNECTIONS = 512;

    /** What main() returns in a forked child: include childScript(), then let PHP end normally. */
    public const CHILD = -1;

    /** @var array<int, ServerConnection> by stream id */
    private array $connections = [];

    private readonly ChildTable $children;

    private bool $stopping = false;

    /** Set in a forked child: its connection; the loop unwinds and main() runs the request. */
    private ?ServerConnection $inChild = null;

    /** The file a child includes at the global scope, from ForkChild::handle(). */
    private static ?string $childScript = null;

    /** @var resource the read end of the self-pipe signal handlers write to (set by run()) */
    private mixed $wakeRead;

    /** @var resource */
    private mixed $wakeWrite;

    /**
     * @param resource $listener a listening unix socket
     * @param resource|null $control a stream whose end means "stop" (the worker's pipe on STDIN)
     */
    public function __construct(
        private readonly mixed $listener,
        private readonly ForkChild $child,
        private readonly int $maxChildren = 8,
        private readonly float $timeLimit = 30.0,
        private readonly float $killGrace = 1.0,
        private readonly mixed $control = null,
        private readonly int $retryAfter = 1,
    ) {
        if ($maxChildren < 1 || $timeLimit <= 0 || $killGrace < 0) {
            throw new \ValueError('ForkServer needs maxChildren >= 1, timeLimit > 0 and killGrace >= 0');
        }
        $this->children = new ChildTable($killGrace);
    }

    /**
     * The entry of a fork server process: `fork-server.php SOCKET CHILD_CLASS MAX TIME_LIMIT KILL_GRACE`.
     * Writes "ready\n" to STDOUT once listening.
     *
     * @param list<string> $argv
     */
    public static function main(array $argv): int
    {
        if (\count($argv) !== 6) {
            \fwrite(\STDERR, "usage: fork-server.php SOCKET CHILD_CLASS MAX TIME_LIMIT KILL_GRACE\n");

            return 2;
        }
        [, $path, $class, $max, $limit, $grace] = $argv;
        if (!\is_a($class, ForkChild::class, true)) {
            \fwrite(\STDERR, "fork server: $class does not implement " . ForkChild::class . "\n");

            return 2;
        }
        @\unlink($path);
        $old = \umask(0o177);
        // A deep accept queue: a burst of requests waits there for the loop rather than being refused (EAGAIN).
        $context = \stream_context_create(['socket' => ['backlog' => self::BACKLOG]]);
        $listener = @\stream_socket_server("unix://$path", $errno, $error, \STREAM_SERVER_BIND | \STREAM_SERVER_LISTEN, $context);
        \umask($old);
        if ($listener === false) {
            \fwrite(\STDERR, "fork server: cannot listen on $path: $error\n");

            return 1;
        }
        $server = new self($listener, new $class(), (int) $max, (float) $limit, (float) $grace, \STDIN);
        $server->child->prepare();
        ChildStdio::prepare();
        \fwrite(\STDOUT, "ready\n");
        $server->run();
        if ($server->inChild !== null) {
            return $server->serveInChild($server->inChild);
        }
        \fclose($listener);
        @\unlink($path);

        return 0;
    }

    /**
     * In a forked child, after main() returned CHILD: the file to include at the global scope, as PHP's web
     * SAPIs run scripts (top-level variables are globals). Null when there is nothing to include.
     */
    public static function childScript(): ?string
    {
        return self::$childScript;
    }

    public function run(): void
    {
        \stream_set_blocking($this->listener, false);
        $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        if ($pair === false) {
            throw new \RuntimeException('Cannot create the fork server wake-up pair');
        }
        [$this->wakeRead, $this->wakeWrite] = $pair;
        \stream_set_blocking($this->wakeRead, false);
        \stream_set_blocking($this->wakeWrite, false);
        \pcntl_async_signals(true);
        \pcntl_signal(\SIGCHLD, $this->wake(...));
        \pcntl_signal(\SIGTERM, $this->stop(...));
        \pcntl_signal(\SIGINT, $this->stop(...));
        \pcntl_signal(\SIGPIPE, \SIG_IGN);
        while (!$this->stopping && $this->inChild === null) {
            $this->tick();
        }
        if ($this->inChild === null) {
            $this->shutdown();
        }
    }

    private function wake(): void
    {
        @\fwrite($this->wakeWrite, '.');
    }

    private function stop(): void
    {
        $this->stopping = true;
        $this->wake();
    }

    private function tick(): void
    {
        $read = [$this->wakeRead];
        if (\count($this->connections) < self::MAX_CONNECTIONS) {
            $read[] = $this->listener;
        }
        if ($this->control !== null) {
            $read[] = $this->control;
        }
        $write = [];
        foreach ($this->connections as $conn) {
            if ($conn->output !== '') {
                $write[] = $conn->socket;
            } elseif ($conn->child === null || $conn->termSent === null) {
                $read[] = $conn->socket;
            }
        }
        $except = null;
        $wait = $this->children->nextWait();
        $seconds = $wait === null ? null : (int) $wait;
        $micro = $wait === null ? null : (int) (($wait - (int) $wait) * 1e6);
        if (@\stream_select($read, $write, $except, $seconds, $micro) === false) {
            return; // interrupted by a signal; its handler already ran
        }
        foreach ($read as $stream) {
            if ($stream === $this->listener) {
                $this->accept();
            } elseif ($stream === $this->wakeRead) {
                while (@\fread($this->wakeRead, 4096) !== '') {
                }
            } elseif ($stream === $this->control) {
                $data = @\fread($this->control, 4096);
                if ($data === '' || $data === false) {
                    $this->stopping = true;
                }
            } else {
                $this->readFrom($this->connections[\get_resource_id($stream)]);
                if ($this->inChild !== null) {
                    return;
                }
            }
        }
        foreach ($write as $stream) {
            $this->flush($this->connections[\get_resource_id($stream)]);
        }
        $this->children->reap($this->drop(...));
        $this->children->enforceLimits();
    }

    private function accept(): void
    {
        while (\count($this->connections) < self::MAX_CONNECTIONS && ($socket = @\stream_socket_accept($this->listener, 0)) !== false) {
            \stream_set_blocking($socket, false);
            $this->connections[\get_resource_id($socket)] = new ServerConnection($socket);
        }
    }

    private function readFrom(ServerConnection $conn): void
    {
        $data = @\fread($conn->socket, 65536);
        if ($conn->child !== null) {
            // The request was read whole: anything now is the client going away.
            if ($data === '' || $data === false) {
                $conn->deadline = \min($conn->deadline, \microtime(true));
                $this->children->enforceLimits();
            }

            return;
        }
        if ($data === '' || $data === false) {
            if (\feof($conn->socket) || $data === false) {
                $this->drop($conn);
            }

            return;
        }
        try {
            $conn->parser->feed($data);
        } catch (ScgiException $e) {
            $this->respond($conn, 400, $e->getMessage());

            return;
        }
        $body = $conn->parser->body();
        if ($conn->parser->params() !== null) {
            $conn->body ??= \fopen('php://temp/maxmemory:1048576', 'w+b') ?: null;
            if ($body !== '' && $conn->body !== null) {
                \fwrite($conn->body, $body);
            }
        }
        if ($conn->parser->isComplete()) {
            $this->dispatch($conn);
        }
    }

    private function dispatch(ServerConnection $conn): void
    {
        if ($this->children->count() >= $this->maxChildren) {
            $this->respond($conn, 503, "All {$this->maxChildren} fork slots are in use", ["Retry-After: {$this->retryAfter}"]);

            return;
        }
        $params = $conn->parser->params();
        \assert($params !== null && $conn->body !== null);
        \rewind($conn->body);
        $this->child->beforeFork($params);
        $pid = \pcntl_fork();
        if ($pid === -1) {
            $this->respond($conn, 502, 'fork() failed: ' . \pcntl_strerror(\pcntl_get_last_error()));

            return;
        }
        if ($pid === 0) {
            $this->becomeChild($conn);

            return;
        }
        @\posix_setpgid($pid, $pid);
        $this->children->add($pid, $conn, \microtime(true) + $this->timeLimit);
    }

    /** In the new child: leaves the server's state behind; run() then unwinds to main(). */
    private function becomeChild(ServerConnection $conn): void
    {
        @\posix_setpgid(0, 0);
        foreach ([\SIGCHLD, \SIGTERM, \SIGINT, \SIGPIPE] as $signal) {
            \pcntl_signal($signal, \SIG_DFL);
        }
        \pcntl_async_signals(false);
        \pcntl_alarm((int) \ceil($this->timeLimit + 2 * $this->killGrace + 1));
        foreach ($this->connections as $other) {
            if ($other !== $conn) {
                $other->close();
            }
        }
        $this->connections = [];
        $this->children->forget();
        foreach ([$this->listener, $this->wakeRead, $this->wakeWrite] as $stream) {
            \fclose($stream);
        }
        $this->inChild = $conn;
    }

    /** In the child, from main(): hands the request to the ForkChild with fd 1 on the connection. */
    private function serveInChild(ServerConnection $conn): int
    {
        \stream_set_blocking($conn->socket, true);
        ChildStdio::redirect($conn->socket);
        $params = $conn->parser->params();
        \assert($params !== null && $conn->body !== null);
        self::$childScript = $this->child->handle($params, $conn->body);
        ChildStdio::closeOnExec(); // after handle(), which may have opened its own copies of fd 1

        return self::CHILD;
    }

    /** @param list<string> $headers */
    private function respond(ServerConnection $conn, int $status, string $message, array $headers = []): void
    {
        $head = "Status: $status\r\nContent-Type: text/plain\r\n" . \implode('', \array_map(static fn(string $h): string => "$h\r\n", $headers));
        $conn->output .= "$head\r\n$message\n";
        $conn->closeWhenWritten = true;
        $this->flush($conn);
    }

    private function flush(ServerConnection $conn): void
    {
        $written = @\fwrite($conn->socket, $conn->output);
        if ($written === false) {
            $this->drop($conn);

            return;
        }
        $conn->output = (string) \substr($conn->output, $written);
        if ($conn->output === '' && $conn->closeWhenWritten) {
            $this->drop($conn);
        }
    }

    private function drop(ServerConnection $conn): void
    {
        unset($this->connections[\get_resource_id($conn->socket)]);
        $conn->close();
    }

    private function shutdown(): void
    {
        $this->children->stopAll($this->drop(...));
        foreach ($this->connections as $conn) {
            $this->drop($conn);
        }
    }
}
