<?php

declare(strict_types=1);

namespace Kiln\Server;

use Kiln\Loop\StreamPoll;

/** Forks workers and keeps their records: channels read, bus sockets handed to the relay, exits reaped. Policy lives in Supervisor. */
final class WorkerPool
{
    /** @var array<int, WorkerHandle> by pid */
    private array $handles = [];

    private ?StreamPoll $poll = null;

    /**
     * @param \Closure(int, resource, resource|null): int $childMain runs in the child (slot, channel, bus socket),
     *     returns its exit code
     * @param ?BusRelay $relay the node bus: each worker gets a socket to it (null: no bus socket)
     * @param ?StderrRelay $stderr files what workers write to their standard error (null: they keep the server's)
     */
    public function __construct(
        private readonly \Closure $childMain,
        private readonly ?BusRelay $relay = null,
        private readonly ?StderrRelay $stderr = null,
    ) {}

    public function spawn(int $slot, int $generation): WorkerHandle
    {
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        if ($pair === false) {
            throw new ServerException('Cannot create a worker channel (socket pair): too many open files?');
        }
        [$parentEnd, $childEnd] = $pair;
        $bus = $this->relay === null ? [null, null] : stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        if ($bus === false) {
            fclose($parentEnd);
            fclose($childEnd);
            throw new ServerException('Cannot create a worker bus socket (socket pair): too many open files?');
        }
        [$busParent, $busChild] = $bus;
        $stderr = $this->stderr?->open();
        $pid = pcntl_fork();
        if ($pid === -1) {
            foreach ([$parentEnd, $childEnd, $busParent, $busChild, $stderr?->reader] as $end) {
                $end !== null && fclose($end);
            }
            $stderr?->closeWriteEnd();
            throw new ServerException('Cannot fork a worker: ' . pcntl_strerror(pcntl_get_last_error()));
        }
        if ($pid === 0) {
            fclose($parentEnd);
            $busParent !== null && fclose($busParent);
            $this->forgetInChild();
            if ($stderr !== null) {
                $this->stderr?->adopt($stderr);
            }
            exit(($this->childMain)($slot, $childEnd, $busChild));
        }
        fclose($childEnd);
        $busChild !== null && fclose($busChild);
        if ($busParent !== null) {
            $this->relay?->attach($pid, $busParent);
        }
        stream_set_blocking($parentEnd, false);
        $handle = $this->handles[$pid] = new WorkerHandle($slot, $generation, $pid, $parentEnd, microtime(true));
        if ($stderr !== null) {
            $this->stderr?->attach($handle, $stderr);
        }
        return $handle;
    }

    /** In a child forked from the supervisor: closes every worker's channel and bus socket, and forgets the workers. */
    public function forgetInChild(): void
    {
        foreach ($this->handles as $handle) {
            $handle->closeChannel();
            $handle->closeStderr();
        }
        $this->handles = [];
        $this->relay?->forget();
        $this->stderr?->forgetInChild();
    }

    /** @return array<int, WorkerHandle> */
    public function all(): array
    {
        return $this->handles;
    }

    public function isEmpty(): bool
    {
        return $this->handles === [];
    }

    /**
     * Waits up to $timeout for worker lines (a signal cuts the wait short).
     *
     * @param array<string, resource> $extra other streams to watch (keys not starting with b, c, e, f or l)
     * @param list<string> $ready set to the keys of $extra that are readable
     * @return list<array{WorkerHandle, Message}>
     */
    public function read(float $timeout, array $extra = [], array &$ready = []): array
    {
        $ready = [];
        $read = $extra;
        foreach ($this->handles as $pid => $handle) {
            if (\is_resource($handle->channel)) {
                $read["c$pid"] = $handle->channel;
            }
            $stderr = $handle->stderr?->stream();
            if ($stderr !== null) {
                $read["e$pid"] = $stderr;
            }
        }
        foreach ($this->relay?->readable() ?? [] as $pid => $stream) {
            $read["b$pid"] = $stream;
        }
        $read += $this->stderr?->streams() ?? [];
        // A message held open for the rest of its trace is filed once its pipe stays quiet for a moment.
        $flush = $this->stderr?->nextFlush(microtime(true));
        if ($flush !== null) {
            $timeout = min($timeout, $flush);
        }
        if ($read === []) {
            usleep((int) ($timeout * 1e6));
            return [];
        }
        $write = [];
        foreach ($this->relay?->writable() ?? [] as $pid => $stream) {
            $write["b$pid"] = $stream;
        }
        // poll(2) with FFI: a supervisor of a few hundred workers has descriptors past stream_select()'s 1024.
        $found = ($this->poll ??= new StreamPoll())->wait($read, $write, $timeout);
        if ($found === null) {
            $this->stderr?->flushQuiet(microtime(true));
            return [];
        }
        [$readable, $writable] = $found;
        $messages = [];
        foreach ($readable as $key) {
            $key = (string) $key;
            if (isset($extra[$key])) {
                $ready[] = $key;
                continue;
            }
            $pid = (int) substr($key, 1);
            if ($key[0] === 'b') {
                $this->relay?->read($pid);
            } elseif ($key[0] === 'e') {
                $source = $this->handles[$pid]->stderr ?? null;
                $source !== null && $this->stderr?->read($source);
            } elseif ($key[0] === 'l' || $key[0] === 'f') {
                $this->stderr?->readStream($key);
            } elseif (isset($this->handles[$pid])) {
                array_push($messages, ...$this->flush($this->handles[$pid]));
            }
        }
        if ($writable !== []) {
            $this->relay?->flush();
        }
        $this->stderr?->flushQuiet(microtime(true));
        return $messages;
    }

    /**
     * Whatever the worker wrote that is not read yet (its last words, before it is reaped).
     *
     * @return list<array{WorkerHandle, Message}>
     */
    public function flush(WorkerHandle $handle): array
    {
        while (\is_resource($handle->channel)) {
            $data = @fread($handle->channel, 8192);
            if ($data === false || $data === '') {
                if (feof($handle->channel)) {
                    $handle->closeChannel();
                }
                break;
            }
            $handle->buffer .= $data;
        }
        $messages = [];
        foreach (Message::drain($handle->buffer) as $message) {
            $messages[] = [$handle, $message];
        }
        return $messages;
    }

    /**
     * Exited workers, removed from the pool, each with how it ended ("exited with code 70"). Any other
     * child of this process that exited is handed to $other (pid, wait status).
     *
     * @param (\Closure(int, int): mixed)|null $other
     * @return list<array{WorkerHandle, string, bool}> handle, description, whether it exited on its own with code 0
     */
    public function reap(?\Closure $other = null): array
    {
        $exits = [];
        $status = 0;
        while (($pid = pcntl_waitpid(-1, $status, WNOHANG)) > 0) {
            \assert(\is_int($status));
            $handle = $this->handles[$pid] ?? null;
            if ($handle === null) {
                $other !== null && $other($pid, $status);
                continue;
            }
            unset($this->handles[$pid]);
            $this->relay?->detach($pid);
            $handle->stderr !== null && $this->stderr?->reaped($handle->stderr);
            $exits[] = [$handle, self::describe($status), pcntl_wifexited($status) && pcntl_wexitstatus($status) === 0];
        }
        return $exits;
    }

    public static function describe(int $status): string
    {
        if (pcntl_wifsignaled($status)) {
            $signal = pcntl_wtermsig($status);
            $names = [SIGKILL => 'SIGKILL', SIGTERM => 'SIGTERM', SIGSEGV => 'SIGSEGV', SIGABRT => 'SIGABRT',
                SIGQUIT => 'SIGQUIT', SIGINT => 'SIGINT', SIGBUS => 'SIGBUS', SIGPIPE => 'SIGPIPE'];
            return "killed by signal $signal" . (isset($names[$signal]) ? " ({$names[$signal]})" : '');
        }
        $code = pcntl_wexitstatus($status);
        return "exited with code $code" . ($code === Worker::EXIT_BOOT_FAILED ? ' (boot failed)' : '');
    }

    /** Queues a line for the worker with that pid and writes what its channel takes now (see flushOutboxes()). */
    public function send(int $pid, Message $message): void
    {
        $handle = $this->handles[$pid] ?? null;
        if ($handle !== null && \is_resource($handle->channel)) {
            $handle->outbox .= $message->encode();
            $this->writeOutbox($handle);
        }
    }

    /** Writes what is still queued for any worker (a worker busy for a moment reads it later). */
    public function flushOutboxes(): void
    {
        foreach ($this->handles as $handle) {
            if ($handle->outbox !== '') {
                $this->writeOutbox($handle);
            }
        }
    }

    private function writeOutbox(WorkerHandle $handle): void
    {
        if (!\is_resource($handle->channel)) {
            $handle->outbox = '';
            return;
        }
        $written = @fwrite($handle->channel, $handle->outbox);
        if ($written !== false && $written > 0) {
            $handle->outbox = (string) substr($handle->outbox, $written);
        }
    }

    public function signal(WorkerHandle $handle, int $signal): void
    {
        @posix_kill($handle->pid, $signal);
    }
}
