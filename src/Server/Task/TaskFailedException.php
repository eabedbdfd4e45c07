<?php

declare(strict_types=1);

namespace Kiln\Server\Task;

/**
 * The task threw in its task worker (or its result could not be serialized). The exception itself stays
 * there; its class, message and place travel back.
 */
final class TaskFailedException extends TaskException
{
    public function __construct(
        string $message,
        /** The class of what the task threw. */
        public readonly string $remoteClass = '',
        /** `file:line` where it was thrown. */
        public readonly string $remoteWhere = '',
    ) {
        parent::__construct($message);
    }
}
