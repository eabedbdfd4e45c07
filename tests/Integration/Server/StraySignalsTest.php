<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** Signals Kiln gives no meaning, sent to its processes by habit or by a signal to the whole service, stop nothing. */
final class StraySignalsTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    public function testUsr2AndAlrmToTheSupervisorAreLoggedAndTheServerGoesOnServing(): void
    {
        $kiln = KilnProcess::start(self::APP, ['--workers=1']);
        foreach (['SIGUSR2' => SIGUSR2, 'SIGALRM' => SIGALRM] as $name => $signal) {
            $kiln->signal($signal);
            $kiln->waitForLog("/\\[warning\\] \\[supervisor {$kiln->pid()}\\] $name ignored: Kiln acts on SIGTERM/", 5.0);
            self::assertTrue($kiln->isRunning(), "the server runs on after $name");
            self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/version')['status']);
        }
        self::assertSame(0, $kiln->stop());
    }
}
