<?php

declare(strict_types=1);

namespace Kiln\Server\Background;

use Kiln\Server\Log;
use Kiln\Server\StderrRelay;

/**
 * @internal
 *
 * A short-lived child that loads the app and answers the names of its user processes (App::process()), for the
 * supervisor, which never loads app code itself. The supervisor reads the answer in its select loop (stream(),
 * read()), so an app that takes long to load (a database reached at load time) holds neither the workers' bus,
 * the admin listener nor the reaping of processes meanwhile; past its deadline the child is killed and the
 * answer is "not known".
 */
final class AppInspection
{
    private string $data = '';

    private bool $exited = false;

    /** @var resource|null our end, non-blocking; null once closed */
    private mixed $socket;

    /** @param resource $socket */
    private function __construct(
        public readonly int $pid,
        mixed $socket,
        public readonly float $deadline,
    ) {
        $this->socket = $socket;
    }

    /**
     * Forks the child; null when it cannot (logged).
     *
     * @param \Closure(): void $inChild runs first in the child: lets go of what belongs to the supervisor
     * @param \Closure(): AppBackground $load
     */
    public static function start(\Closure $inChild, \Closure $load, Log $log, float $timeout, ?StderrRelay $stderr = null): ?self
    {
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        if ($pair === false) {
            $log->error('cannot look for the app\'s user processes: no socket pair');
            return null;
        }
        [$ours, $theirs] = $pair;
        $pipe = $stderr?->open();
        $pid = pcntl_fork();
        if ($pid === -1) {
            fclose($ours);
            fclose($theirs);
            if ($pipe !== null) {
                fclose($pipe->reader);
                $pipe->closeWriteEnd();
            }
            $log->error('cannot look for the app\'s user processes: ' . pcntl_strerror(pcntl_get_last_error()));
            return null;
        }
        if ($pid === 0) {
            fclose($ours);
            $inChild();
            @cli_set_process_title('kiln: app inspection');
            if ($pipe !== null) {
                $stderr?->adopt($pipe); // what loading the app writes (a deprecation) is filed like a worker's
            }
            try {
                $answer = ['ok', array_map('strval', array_keys($load()->processes()))];
            } catch (\Throwable $e) {
                $answer = ['error', $e::class . ': ' . $e->getMessage()];
            }
            fwrite($theirs, json_encode($answer, JSON_THROW_ON_ERROR));
            fclose($theirs);
            exit(0);
        }
        fclose($theirs);
        if ($pipe !== null) {
            $stderr?->follow('app inspection', $pid, $pipe);
        }
        stream_set_blocking($ours, false);
        return new self($pid, $ours, microtime(true) + $timeout);
    }

    /** @return resource|null what the supervisor's select watches; null once the answer is whole or it ended */
    public function stream(): mixed
    {
        return \is_resource($this->socket) ? $this->socket : null;
    }

    /** Takes what came (its stream was readable); true once the answer is whole (the child closed its end). */
    public function read(): bool
    {
        if (!\is_resource($this->socket)) {
            return true;
        }
        while (($chunk = @fread($this->socket, 65536)) !== false && $chunk !== '') {
            $this->data .= $chunk;
        }
        if ($chunk === false || feof($this->socket)) {
            fclose($this->socket);
            $this->socket = null;
            return true;
        }
        return false;
    }

    /**
     * The names of the app's user processes; null when the app did not load or gave no answer (logged at debug).
     *
     * @return list<string>|null
     */
    public function names(Log $log): ?array
    {
        $answer = json_decode($this->data, true);
        if (!\is_array($answer) || ($answer[0] ?? null) !== 'ok' || !\is_array($answer[1] ?? null)) {
            $why = \is_array($answer) && \is_string($answer[1] ?? null) ? $answer[1] : 'no answer';
            $log->debug("the app's user processes are not known (the app did not load: $why)");
            return null;
        }
        return array_values(array_filter($answer[1], 'is_string'));
    }

    /** The supervisor reaped the child. */
    public function exited(): void
    {
        $this->exited = true;
    }

    public function hasExited(): bool
    {
        return $this->exited;
    }

    /** In a process forked from the supervisor meanwhile: closes its copy of the stream, and leaves the child be. */
    public function forget(): void
    {
        if (\is_resource($this->socket)) {
            fclose($this->socket);
        }
        $this->socket = null;
    }

    /** Given up or done: the stream is closed and a child still there is killed (the supervisor reaps it). */
    public function end(): void
    {
        if (\is_resource($this->socket)) {
            fclose($this->socket);
        }
        $this->socket = null;
        if (!$this->exited) {
            @posix_kill($this->pid, SIGKILL);
        }
    }
}
