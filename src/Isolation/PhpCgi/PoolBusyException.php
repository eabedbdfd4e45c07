<?php

declare(strict_types=1);

namespace Kiln\Isolation\PhpCgi;

/** Every child is busy and the wait queue is full, or no child came free in time: answer 503 + Retry-After. */
final class PoolBusyException extends PhpCgiException {}
