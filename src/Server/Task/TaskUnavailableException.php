<?php

declare(strict_types=1);

namespace Kiln\Server\Task;

/** No task worker could be reached (the server is stopping, or its task socket is gone). */
final class TaskUnavailableException extends TaskException {}
