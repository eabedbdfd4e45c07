<?php

declare(strict_types=1);

namespace Kiln\Server\Task;

/** The node's task queue (--task-queue calls waiting for a task worker) is full: the call failed at once. A request that lets it escape gets a 503. */
final class TaskQueueFullException extends TaskException {}
