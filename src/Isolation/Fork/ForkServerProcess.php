<?php

declare(strict_types=1);

namespace Kiln\Isolation\Fork;

use Kiln\Isolation\Cgi\CleanExec;

use function Kiln\Loop\async;

use Kiln\Loop\CancelledException;

use function Kiln\Loop\delay;

use Kiln\Loop\Future;
use Kiln\Loop\Loop;
use Kiln\Loop\Process;
use Kiln\Loop\ProcessException;
use Kiln\Loop\StreamException;
use Kiln\Loop\TimeoutCancellation;

use function Kiln\Loop\write;

use Kiln\Server\StderrFiler;
use Kiln\Server\WorkerLog;

/**
 * The worker's handle on its fork server (ForkServer): starts it on first use (`php fork-server.php` with
 * $phpOptions, so it loads nothing but the autoloader and the ForkChild class), restarts it if it died,
 * logs its stderr, and sends it requests.
 *
 * One start at a time: requests that arrive while the server starts (a cold start on a loaded machine takes
 * seconds) wait for that start. Before, each started a server of its own on the same socket path; the later ones
 * unlinked the earlier ones' sockets, a connect then failed, and the worker killed the server that had just
 * accepted the other requests, which then came back empty (502).
 *
 * The time limit is the worker's: a response not finished after $timeLimit seconds throws
 * CgiTimeoutException and closes the connection, upon which the server kills the child's process group;
 * the server's own limit (a little later) is only a backstop. The bound on children is the server's: a
 * request over it gets the server's `Status: 503` response, to pass on as it is.
 */
final class ForkServerProcess
{
    /**
     * opcache on, and caching files whatever their age: the children inherit the server's start as opcache's
     * request time, so with PHP's file_update_protection a script written after the server started would be
     * compiled again in every child (see JitLauncher).
     */
    public const DEFAULT_PHP_OPTIONS = ['opcache.enable_cli=1', 'opcache.file_update_protection=0', 'ffi.enable=1', 'display_errors=0', 'log_errors=1', 'html_errors=0'];

    private const ENTRY = __DIR__ . '/fork-server.php';

    /** connect(2) on a unix socket whose accept queue is full (Linux). */
    private const EAGAIN = 11;

    private ?Process $process = null;

    private ?string $path = null;

    /** @var Future<Process>|null the start under way, awaited by every request that needs the server meanwhile */
    private ?Future $starting = null;

    /** @var \Closure(string, string): void */
    private readonly \Closure $log;

    /**
     * @param class-string<ForkChild> $childClass
     * @param list<string> $phpOptions `-d` settings of the server process (inherited by every child)
     * @param (\Closure(string $level, string $message): void)|null $log null: the worker's error log (WorkerLog)
     */
    public function __construct(
        private readonly string $childClass,
        public readonly int $maxChildren = 8,
        public readonly float $timeLimit = 30.0,
        public readonly float $killGrace = 1.0,
        private readonly array $phpOptions = self::DEFAULT_PHP_OPTIONS,
        ?\Closure $log = null,
        private readonly float $startTimeout = 30.0,
    ) {
        if ($maxChildren < 1 || $timeLimit <= 0 || $killGrace < 0) {
            throw new \ValueError('ForkServerProcess needs maxChildren >= 1, timeLimit > 0 and killGrace >= 0');
        }
        $this->log = $log ?? WorkerLog::write(...); // the worker's error log (STDERR outside a worker)
    }

    public function __destruct()
    {
        if ($this->path !== null) {
            @\unlink($this->path);
        }
    }

    /**
     * Sends one request; returns once it is written. Starts (or restarts) the server when needed.
     *
     * @param array<string, string> $params
     * @param string|resource $body CONTENT_LENGTH is taken from it (a stream: from where it is to its end)
     *
     * @throws ForkUnavailableException
     */
    public function send(array $params, mixed $body = ''): ForkResponse
    {
        $length = \is_string($body) ? \strlen($body) : self::remaining($body);
        $head = Scgi::head($params, $length);
        $deadline = new TimeoutCancellation($this->timeLimit, "The forked script ran longer than {$this->timeLimit}s");
        $socket = $this->connect($deadline);
        try {
            write($socket, $head, $deadline);
            if (\is_string($body)) {
                if ($body !== '') {
                    write($socket, $body, $deadline);
                }
            } else {
                while (!\feof($body) && ($chunk = \fread($body, 65536)) !== false && $chunk !== '') {
                    write($socket, $chunk, $deadline);
                }
            }
        } catch (StreamException) {
            // The server closed early: it answered already (503, 400), and the response says so.
        } catch (CancelledException $e) {
            \fclose($socket);
            throw new ForkUnavailableException('The fork server did not take the request in time', 0, $e);
        }

        return new ForkResponse($socket, $deadline);
    }

    /** The server's pid, or null when it is not running. */
    public function pid(): ?int
    {
        return $this->process?->isRunning() ? $this->process->pid() : null;
    }

    /** Stops the server: its children get SIGTERM, then SIGKILL after killGrace. Suspends until it is gone. */
    public function stop(): void
    {
        $process = $this->process;
        $this->process = null;
        if ($process === null) {
            return;
        }
        $process->closeStdin();
        try {
            $process->join(new TimeoutCancellation($this->killGrace + 2.0));
        } catch (CancelledException) {
            // join() has killed it.
        }
        if ($this->path !== null) {
            @\unlink($this->path);
        }
    }

    /**
     * A connection to the running server. A full accept queue (a burst of requests; errno EAGAIN) means the server
     * is busy, not gone: the request waits for room, within its time limit. A refused or missing socket means it
     * is not listening: it is killed and started again, once.
     *
     * @return resource
     *
     * @throws ForkUnavailableException
     */
    private function connect(TimeoutCancellation $deadline): mixed
    {
        $restarted = false;
        while (true) {
            $process = $this->running();
            $socket = @\stream_socket_client("unix://{$this->path}", $errno, $error, 1.0);
            if ($socket !== false) {
                \stream_set_blocking($socket, false);

                return $socket;
            }
            if ($errno === self::EAGAIN && $process->isRunning()) {
                try {
                    delay(0.005, $deadline);
                } catch (CancelledException $e) {
                    throw new ForkUnavailableException("The fork server's accept queue stayed full for {$this->timeLimit}s", 0, $e);
                }
                continue;
            }
            if ($restarted) {
                throw new ForkUnavailableException("Cannot connect to the fork server at {$this->path}: $error");
            }
            ($this->log)('error', "fork server {$process->pid()} at {$this->path} refused a connection ($error): restarting it");
            if ($this->process === $process) {
                // Only the server that refused: another request may have replaced it meanwhile.
                $process->kill();
                $this->process = null;
            }
            $restarted = true;
        }
    }

    /**
     * The running server: started when there is none, or when the last one exited (logged with its exit code).
     *
     * @throws ForkUnavailableException
     */
    private function running(): Process
    {
        if ($this->process !== null && !$this->process->isRunning()) {
            $code = $this->process->join();
            ($this->log)('warning', "fork server {$this->process->pid()} exited (" . ($code > 128 ? 'signal ' . ($code - 128) : "code $code") . '): starting a new one');
            $this->process = null;
        }
        if ($this->process !== null) {
            return $this->process;
        }
        $start = $this->starting ??= async($this->start(...));
        try {
            $process = $start->await();
        } catch (\Throwable $e) { // ForkUnavailableException from start()
            $this->startEnded($start);
            throw $e;
        }
        $this->startEnded($start);

        return $process;
    }

    /** @param Future<Process> $start */
    private function startEnded(Future $start): void
    {
        if ($this->starting === $start) {
            $this->starting = null;
        }
    }

    /** @throws ForkUnavailableException */
    private function start(): Process
    {
        $this->path ??= \sys_get_temp_dir() . '/kiln-fork-' . \getmypid() . '-' . \bin2hex(\random_bytes(4)) . '.sock';
        $command = [\PHP_BINARY];
        $ini = \php_ini_loaded_file();
        if ($ini !== false) {
            \array_push($command, '-c', $ini); // the worker's php.ini (the scan dir is the binary's anyway)
        }
        // The worker's memory_limit (kiln serve --memory-limit) holds for the scripts too; a -d of the options wins.
        $limit = \ini_get('memory_limit');
        if (\is_string($limit) && $limit !== '') {
            \array_push($command, '-d', "memory_limit=$limit");
        }
        foreach ($this->phpOptions as $option) {
            $command[] = '-d';
            $command[] = $option;
        }
        $serverLimit = $this->timeLimit + $this->killGrace + 1.0;
        \array_push($command, self::ENTRY, $this->path, $this->childClass, (string) $this->maxChildren, (string) $serverLimit, (string) $this->killGrace);
        try {
            $process = Process::start(CleanExec::wrap($command));
        } catch (ProcessException $e) {
            throw new ForkUnavailableException('Cannot start the fork server: ' . $e->getMessage(), 0, $e);
        }
        try {
            $ready = '';
            $deadline = new TimeoutCancellation($this->startTimeout);
            while (!\str_contains($ready, "ready\n")) {
                $chunk = $process->readStdout($deadline);
                if ($chunk === null) {
                    throw new ForkUnavailableException('The fork server exited at start: ' . \trim($process->readStderr($deadline) ?? ''));
                }
                $ready .= $chunk;
            }
        } catch (CancelledException|StreamException $e) {
            $process->kill();
            throw new ForkUnavailableException('The fork server did not start within ' . $this->startTimeout . 's', 0, $e);
        }
        $this->process = $process;
        // A server that dies (kill -9) is reaped within a second, not at the next request it would have had: no
        // zombie is left under the worker meanwhile. The next request logs its exit and starts a new one.
        Loop::unreference(Loop::repeat(1.0, static function (string $id) use ($process): void {
            if (!$process->isRunning()) {
                Loop::cancel($id);
            }
        }));
        $log = $this->log;
        async(static function () use ($process, $log): void {
            // The children's messages, one entry each (an uncaught exception with its trace) at PHP's level.
            $filer = new StderrFiler(static fn(string $level, string $message) => $log($level, 'fork: ' . $message));
            try {
                while (($chunk = $process->readStderr()) !== null) {
                    $filer->write($chunk);
                }
            } catch (StreamException) {
            }
            $filer->end();
        })->ignore();
        ($this->log)('info', "fork server {$process->pid()} listening on {$this->path} (max {$this->maxChildren} children)");

        return $process;
    }

    /** @param resource $body */
    private static function remaining(mixed $body): int
    {
        $stat = \fstat($body);
        $position = \ftell($body);
        if ($stat === false || $position === false) {
            throw new \ValueError('A request body stream must be a seekable file');
        }

        return $stat['size'] - $position;
    }
}
