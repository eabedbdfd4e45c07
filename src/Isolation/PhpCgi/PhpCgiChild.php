<?php

declare(strict_types=1);

namespace Kiln\Isolation\PhpCgi;

use Kiln\Isolation\FastCgi\FastCgiAddress;

/** One member of a worker's php-cgi slice: its index is stable, its process (pid, socket) changes on replacement. */
final class PhpCgiChild
{
    public ChildState $state = ChildState::Starting;

    public ?int $pid = null;

    public string $socket = '';

    public ?FastCgiAddress $address = null;

    /** Requests sent to the current process. */
    public int $served = 0;

    /** Why it failed (state Failed), and when the supervisor tries again. */
    public string $failure = '';

    public float $retryAt = 0.0;

    public function __construct(public readonly int $index) {}
}
