<?php

declare(strict_types=1);

namespace Kiln\Db;

/** Every connection of the pool stayed busy for the pool's whole wait timeout. */
final class PoolTimeoutException extends DbException {}
