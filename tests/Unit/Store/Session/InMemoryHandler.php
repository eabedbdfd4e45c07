<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store\Session;

/** A session handler that keeps nothing: lets a test run session_encode() in the test process. */
final class InMemoryHandler implements \SessionHandlerInterface
{
    public function open(string $path, string $name): bool
    {
        return true;
    }

    public function close(): bool
    {
        return true;
    }

    public function read(string $id): string
    {
        return '';
    }

    public function write(string $id, string $data): bool
    {
        return true;
    }

    public function destroy(string $id): bool
    {
        return true;
    }

    public function gc(int $max_lifetime): int
    {
        return 0;
    }
}
