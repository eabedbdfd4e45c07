<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * What a peer server for tests (ApacheProcess, NginxProcess, PhpFpmProcess) offers once started: its process and
 * temp dir, and stop() by PID (also when the object goes away), the dir removed. The class holds the PeerProcess
 * as $process and its temp dir as $dir.
 *
 * @internal
 */
trait PeerServer
{
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
