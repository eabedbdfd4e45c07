<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/** A throwaway database server for the tests: where Kiln\Db reaches it, and how it is stopped. */
interface DbServer
{
    /** The URL of the test database over TCP on 127.0.0.1, with extra query options. */
    public function url(string $options = ''): string;

    /** The same database over the server's unix socket. */
    public function socketUrl(): string;

    public function port(): int;

    public function stop(): void;
}
