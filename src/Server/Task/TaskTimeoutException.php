<?php

declare(strict_types=1);

namespace Kiln\Server\Task;

/** The task did not finish in time (waiting in the queue included); a task worker running it was killed and is replaced. */
final class TaskTimeoutException extends TaskException {}
