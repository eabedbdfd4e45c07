<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Store\BusGateway;
use Kiln\Store\InProcessBus;
use Kiln\Store\Publish;
use PHPUnit\Framework\TestCase;

/** Publish::to() from another process (as a php-cgi or forked child runs it) through a worker's BusGateway. */
final class BusGatewayTest extends TestCase
{
    private const BOOTSTRAP = __DIR__ . '/../../../src/bootstrap.php';

    private string $tmp;

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        $this->tmp = sys_get_temp_dir() . '/kiln-gateway-test-' . bin2hex(random_bytes(3));
        mkdir($this->tmp);
    }

    protected function tearDown(): void
    {
        @rmdir($this->tmp);
    }

    public function testAScriptInAnotherProcessPublishesInOrderAndReturnsOnceItWasPublished(): void
    {
        $bus = new InProcessBus();
        $heard = [];
        $bus->subscribe('news', static function (string $channel, string $payload) use (&$heard): void {
            $heard[] = $payload;
        });
        $gateway = BusGateway::start($bus, $this->tmp);
        $big = str_repeat('b', 1 << 20);
        [$code, $out] = $this->script(
            'foreach (["one", "two", str_repeat("b", 1 << 20), "three"] as $m) { \Kiln\Store\Publish::to("news", $m); } echo "done";',
            [Publish::SOCKET => $gateway->socket, Publish::TOKEN => $gateway->token],
            static function () use (&$heard): bool {
                return \count($heard) >= 4;
            },
        );
        $gateway->close();
        self::assertSame([0, 'done'], [$code, $out]);
        self::assertSame(['one', 'two', $big, 'three'], $heard);
    }

    public function testAWrongTokenPublishesNothingAndTheScriptIsTold(): void
    {
        $bus = new InProcessBus();
        $heard = [];
        $bus->subscribe('news', static function (string $channel, string $payload) use (&$heard): void {
            $heard[] = $payload;
        });
        $gateway = BusGateway::start($bus, $this->tmp);
        [$code, $out] = $this->script(
            'try { \Kiln\Store\Publish::to("news", "forged"); echo "published"; } catch (\Kiln\Store\BusException $e) { echo $e->getMessage(); }',
            [Publish::SOCKET => $gateway->socket, Publish::TOKEN => str_repeat('0', 64)],
        );
        $gateway->close();
        self::assertSame(0, $code);
        self::assertStringContainsString('closed the connection', $out);
        self::assertSame([], $heard);
    }

    public function testAMessageTheBusRefusesFailsInTheScriptWithTheReason(): void
    {
        $bus = new InProcessBus();
        $gateway = BusGateway::start($bus, $this->tmp);
        $bus->close();
        [, $out] = $this->script(
            'try { \Kiln\Store\Publish::to("news", "late"); echo "published"; } catch (\Kiln\Store\BusException $e) { echo $e->getMessage(); }',
            [Publish::SOCKET => $gateway->socket, Publish::TOKEN => $gateway->token],
        );
        $gateway->close();
        self::assertSame("The bus is closed: a message to 'news' was not published", $out);
    }

    public function testAScriptWhoseWorkerHasNoGatewayIsToldAndDoesNotPublishOnItsOwnBus(): void
    {
        [, $out] = $this->script(
            // As php-cgi gets them: meta-variables in $_SERVER (an empty environment variable would not survive proc_open()).
            '$_SERVER["KILN_BUS_SOCKET"] = $_SERVER["KILN_BUS_TOKEN"] = "";'
            . ' try { \Kiln\Store\Publish::to("news", "x"); echo "published"; } catch (\Kiln\Store\BusException $e) { echo $e->getMessage(); }',
            [],
        );
        self::assertStringContainsString('could not open its bus socket', $out);
    }

    public function testTheSocketIsTheUsersOnlyAndGoesWithTheGateway(): void
    {
        $gateway = BusGateway::start(new InProcessBus(), $this->tmp);
        self::assertSame(0600, fileperms($gateway->socket) & 0777);
        self::assertSame(0700, fileperms(\dirname($gateway->socket)) & 0777);
        self::assertMatchesRegularExpression('/^[0-9a-f]{64}$/D', $gateway->token);
        $gateway->close();
        self::assertFileDoesNotExist($gateway->socket);
        self::assertDirectoryDoesNotExist(\dirname($gateway->socket));
    }

    public function testWithoutAGatewayOrAWorkerPublishReachesThisProcesssOwnBus(): void
    {
        [$code, $out] = $this->script(
            '$bus = \Kiln\Store\NodeBus::get(); $bus->subscribe("n", function ($c, $p) { echo $p; });'
            . ' \Kiln\Store\Publish::to("n", "local"); \Kiln\Loop\Loop::run(); echo \Kiln\Store\NodeBus::spansNode() ? " node" : " process";',
            [],
        );
        self::assertSame([0, 'local process'], [$code, $out]);
    }

    /**
     * Runs PHP code in a child process with $env while this process runs its loop (the gateway answers).
     *
     * @param array<string, string> $env
     * @param ?\Closure(): bool $until also wait for this
     * @return array{int, string} exit code, stdout
     */
    private function script(string $code, array $env, ?\Closure $until = null): array
    {
        $env = [...array_diff_key(getenv(), [Publish::SOCKET => 1, Publish::TOKEN => 1]), ...$env];
        $process = proc_open([PHP_BINARY, '-r', 'require ' . var_export(self::BOOTSTRAP, true) . "; $code"], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
        self::assertIsResource($process);
        stream_set_blocking($pipes[1], false);
        $out = '';
        $code = -1;
        $deadline = microtime(true) + 15;
        Loop::repeat(0.005, static function (string $id) use ($process, $pipes, &$out, &$code, $until, $deadline): void {
            $out .= (string) stream_get_contents($pipes[1]);
            $status = proc_get_status($process);
            if ($code === -1 && !$status['running']) {
                $code = $status['exitcode'];
            }
            if (($code !== -1 && ($until === null || $until())) || microtime(true) > $deadline) {
                Loop::cancel($id);
            }
        });
        Loop::run();
        stream_set_blocking($pipes[1], true);
        $out .= (string) stream_get_contents($pipes[1]);
        $err = (string) stream_get_contents($pipes[2]);
        proc_close($process);
        self::assertSame('', $err);
        return [$code, $out];
    }
}
