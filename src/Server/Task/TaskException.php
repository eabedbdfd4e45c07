<?php

declare(strict_types=1);

namespace Kiln\Server\Task;

use Kiln\Server\ServerException;

/** A task call that did not give a result: the base of the task workers' runtime failures. */
class TaskException extends ServerException {}
