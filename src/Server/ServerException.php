<?php

declare(strict_types=1);

namespace Kiln\Server;

/** A runtime failure of the process model: a port taken, a pid file held, workers that cannot boot. */
class ServerException extends \Exception {}
