<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * What a peer web server for tests (ApacheProcess, NginxProcess) offers once started: its address, its process
 * and temp dir, and stop() by PID (also when the object goes away), the dir removed. The class holds the
 * PeerProcess as $process, its temp dir as $dir and its port as $port.
 *
 * @internal
 */
trait PeerServer
{
    public function baseUrl(): string
    {
        return "http://127.0.0.1:{$this->port}";
    }

    public function port(): int
    {
        return $this->port;
    }

    public function pid(): int
    {
        return $this->process->pid();
    }

    public function directory(): string
    {
        return $this->dir;
    }

    public function isRunning(): bool
    {
        return $this->process->isRunning();
    }

    public function stop(): void
    {
        $this->process->stop();
        PeerProcess::removeDir($this->dir);
    }

    public function __destruct()
    {
        $this->stop();
    }
}
