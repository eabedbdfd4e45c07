<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App;

use Kiln\App\App;
use Kiln\App\Handler\OutputCapture;
use Kiln\Http\Request;
use Kiln\Http\Wire\RequestHead;

use function Kiln\Loop\async;
use function Kiln\Loop\await;
use function Kiln\Loop\delay;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use PHPUnit\Framework\TestCase;

final class BlockingWarningTest extends TestCase
{
    /** @var list<string> */
    private array $logged = [];

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        Loop::setErrorHandler(null);
    }

    public function testARouteThatBlocksItsWorkerIsReportedOnceWithItsPath(): void
    {
        $app = $this->app();
        $app->get('/blocking', static function (): string {
            usleep(80_000); // as a PDO query would: the loop waits with the handler
            delay(0.001);

            return 'done';
        });
        $this->serve($app, '/blocking');
        $this->serve($app, '/blocking');
        self::assertCount(1, $this->logged, 'once per worker');
        self::assertMatchesRegularExpression('~^GET /blocking kept the worker busy for \d+ ms without yielding~', $this->logged[0]);
    }

    public function testARouteThatSuspendsIsNotReportedHoweverLongItTakes(): void
    {
        $app = $this->app();
        $app->get('/waiting', static function (): string {
            delay(0.08);

            return 'done';
        });
        $app->get('/quick', static fn(): string => 'quick');
        $this->serve($app, '/waiting');
        $this->serve($app, '/quick');
        self::assertSame([], $this->logged);
    }

    public function testARouteThatBlocksAndReturnsWithoutSuspendingIsReportedToo(): void
    {
        $app = $this->app();
        $app->get('/sync', static function (): string {
            usleep(80_000);

            return 'done';
        });
        $this->serve($app, '/sync');
        self::assertCount(1, $this->logged);
    }

    public function testTheWarningIsOffUnlessAskedFor(): void
    {
        $app = new App();
        $app->get('/blocking', static function (): string {
            usleep(80_000);

            return 'done';
        });
        $this->serve($app, '/blocking');
        self::assertSame([], $this->logged);
    }

    protected function tearDown(): void
    {
        OutputCapture::instance()->uninstall(); // a handler in a Fiber installs the worker-wide echo capture
    }

    private function app(): App
    {
        return (new App(debug: true))->warnWhenBlocking(0.05, function (string $message): void {
            $this->logged[] = $message;
        });
    }

    private function serve(App $app, string $path): void
    {
        $head = new RequestHead('GET', $path, '1.1', ['host' => ['x']], $path, '', 'x', RequestHead::BODY_NONE, 0, true, false);
        $response = await(async(static fn() => $app->handle(new Request($head, '', null, '127.0.0.1', 40000))));
        self::assertSame(200, $response->status());
        await(async(static fn() => delay(0.01))); // let the deferred check run
    }
}
