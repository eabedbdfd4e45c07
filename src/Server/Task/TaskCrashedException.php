<?php

declare(strict_types=1);

namespace Kiln\Server\Task;

/** The task worker running the call ended before answering (killed, a fatal error, exit()); the supervisor replaces it. */
final class TaskCrashedException extends TaskException {}
