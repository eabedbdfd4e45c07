<?php

declare(strict_types=1);

namespace Kiln\App;

use Kiln\Loop\Future;
use Kiln\Server\Task\TaskClient;

/**
 * Runs a task in one of the server's task workers (`kiln serve --task-workers=N`) and returns the Future of
 * its result: `task([Images::class, 'resize'], $path, 300)->await()`, or a task registered by name with
 * `$app->task('resize', fn (string $path, int $width) => …)`. The calling Fiber waits; the worker keeps
 * serving. Arguments and result are serialized (a closure or a resource is refused here, with a \ValueError).
 * The time limit is --task-timeout; failures are TaskException subclasses (docs/background.md).
 *
 * @param string|array{string, string} $task
 * @return Future<mixed>
 */
function task(string|array $task, mixed ...$args): Future
{
    return TaskClient::current()->call($task, array_values($args));
}

/**
 * task() with its own time limit in seconds (the wait for a free task worker included).
 *
 * @param string|array{string, string} $task
 * @return Future<mixed>
 */
function taskWithin(float $seconds, string|array $task, mixed ...$args): Future
{
    return TaskClient::current()->call($task, array_values($args), $seconds);
}
