<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * A supervisor whose descriptors are numbered past 1023, as one of a few hundred workers has them (three each):
 * stream_select() cannot watch those (FD_SETSIZE), and a supervisor that relied on it never saw its workers ready
 * and spun. Here the server inherits 1,100 open descriptors, which pushes every one it opens past that number.
 */
final class HighDescriptorsTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';
    private const KILN = __DIR__ . '/../../../bin/kiln';

    private ?KilnProcess $server = null;

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
    }

    public function testAServerWhoseDescriptorsArePastStreamSelectsLimitStartsServesAndReloads(): void
    {
        $open = 'for fd in $(seq 3 1102); do eval "exec $fd</dev/null"; done; exec "$@"';
        $this->server = $server = KilnProcess::launch(
            ['bash', '-c', $open, 'kiln', PHP_BINARY, self::KILN, 'serve', self::APP, '--listen=127.0.0.1:0', '--workers=2'],
            [],
            20.0,
        );
        $supervisor = $server->pid();
        $highest = max(array_map('intval', array_map('basename', glob("/proc/$supervisor/fd/*") ?: [])));
        self::assertGreaterThan(1102, $highest, 'the supervisor holds descriptors past 1023');
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/')['status']);

        $server->signal(SIGHUP);
        $server->waitForLog('/reloaded: generation 2 serving/', 20.0);
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/')['status']);
        self::assertSame(0, $server->stop());
        $this->server = null;
    }
}
