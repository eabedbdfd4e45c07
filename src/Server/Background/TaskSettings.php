<?php

declare(strict_types=1);

namespace Kiln\Server\Background;

/**
 * The task workers' settings: how many (`--task-workers`, 0: none), how many calls may wait for one
 * across the node (`--task-queue`), and a call's default time limit (`--task-timeout`, seconds, queue
 * wait included). They recycle by --max-requests and --max-memory, as the workers do.
 */
final class TaskSettings
{
    public function __construct(
        public readonly int $workers = 0,
        public readonly int $queue = 64,
        public readonly float $timeout = 60.0,
    ) {
        if ($workers < 0 || $workers > 256) {
            throw new \ValueError("Task workers must be between 0 and 256, got $workers");
        }
        if ($queue < 1 || $queue > 4096) {
            throw new \ValueError("The task queue holds 1 to 4096 calls, got $queue");
        }
        if (!is_finite($timeout) || $timeout <= 0) {
            throw new \ValueError("The task timeout is a number of seconds above 0, got $timeout");
        }
    }
}
