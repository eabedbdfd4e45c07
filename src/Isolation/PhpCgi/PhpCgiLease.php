<?php

declare(strict_types=1);

namespace Kiln\Isolation\PhpCgi;

use Kiln\Isolation\FastCgi\FastCgiAddress;

/**
 * One request's hold on one php-cgi process, from PhpCgiPool::acquire() to exactly one release().
 * It names the process (pid, socket), not the slot: a release after the slot moved on is ignored.
 */
final class PhpCgiLease
{
    public bool $released = false;

    public function __construct(
        public readonly int $index,
        public readonly int $pid,
        /** The unix socket path the process listens on. */
        public readonly string $socket,
        /** The same, as the FastCGI client takes it (made once per process, not per request). */
        public readonly FastCgiAddress $address,
    ) {}
}
