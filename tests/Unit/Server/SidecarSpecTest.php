<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\Message;
use Kiln\Server\SidecarSpec;
use PHPUnit\Framework\TestCase;

final class SidecarSpecTest extends TestCase
{
    public function testASpecCrossesTheChannelAsOneLineAndComesBackTheSame(): void
    {
        $spec = new SidecarSpec('php-cgi-7', ['php-cgi', '-d', "error_log=/tmp/a b\nc", '-b', '{socket}'], ['A' => "x\ny", 'PHP_FCGI_CHILDREN' => '0'], 2);
        $line = (new Message(Message::SIDECAR_OPEN, $spec->toJson()))->encode();
        self::assertSame(1, substr_count($line, "\n"));
        $message = Message::decode($line);
        self::assertNotNull($message);
        self::assertEquals($spec, SidecarSpec::fromJson($message->argument));
    }

    public function testTheSocketPathGoesWhereverTheCommandSaysSocket(): void
    {
        $spec = new SidecarSpec('s', ['/bin/prog', '--listen={socket}', '-b', '{socket}'], [], 1);
        self::assertSame(['/bin/prog', '--listen=/tmp/x.sock', '-b', '/tmp/x.sock'], $spec->commandFor('/tmp/x.sock'));
    }

    public function testAnEmptyEnvironmentStaysAnObjectSoItDecodes(): void
    {
        $spec = new SidecarSpec('s', ['p', '{socket}'], [], 1);
        self::assertEquals($spec, SidecarSpec::fromJson($spec->toJson()));
    }

    public function testAProbeOfAnyBytesAndItsTimeoutCrossTheChannelIntact(): void
    {
        $probe = "\x01\x09\x00\x00\x00\x11\x07\x00\x0fFCGI\n\0";
        $spec = SidecarSpec::fromJson((new SidecarSpec('p', ['/bin/x', SidecarSpec::SOCKET], [], 1, probe: $probe, probeTimeout: 10.0))->toJson());
        self::assertSame([$probe, 10.0], [$spec->probe, $spec->probeTimeout]);
        self::assertSame(['', 0.0], [($plain = SidecarSpec::fromJson((new SidecarSpec('p', ['/bin/x', SidecarSpec::SOCKET], [], 1))->toJson()))->probe, $plain->probeTimeout]);
    }

    public function testAProbeWithoutATimeoutIsRefused(): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('A sidecar probe needs a timeout above 0 s');
        new SidecarSpec('p', ['/bin/x', SidecarSpec::SOCKET], [], 1, probe: 'x');
    }

    public function testASharedSpecStaysSharedOnItsWayToTheSupervisor(): void
    {
        $shared = SidecarSpec::fromJson((new SidecarSpec('s', ['p', '{socket}'], [], 1, shared: true))->toJson());
        self::assertTrue($shared->shared);
        self::assertFalse(SidecarSpec::fromJson((new SidecarSpec('s', ['p', '{socket}'], [], 1))->toJson())->shared);
    }

    public function testABatchSpecStaysOneOnItsWayToTheSupervisor(): void
    {
        self::assertTrue(SidecarSpec::fromJson((new SidecarSpec('s', ['p', '{socket}'], [], 1, batch: true))->toJson())->batch);
        self::assertFalse(SidecarSpec::fromJson((new SidecarSpec('s', ['p', '{socket}'], [], 1))->toJson())->batch, 'not unless asked');
    }

    /** @return iterable<string, array{\Closure(): mixed, string}> */
    public static function misuse(): iterable
    {
        yield 'name with a space' => [static fn() => new SidecarSpec('a b', ['p', '{socket}'], [], 1), 'must be 1-64'];
        yield 'no socket' => [static fn() => new SidecarSpec('a', ['p'], [], 1), '{socket}'];
        yield 'no process' => [static fn() => new SidecarSpec('a', ['p', '{socket}'], [], 0), '1 to 256'];
        yield 'bad env name' => [static fn() => new SidecarSpec('a', ['p', '{socket}'], ['A=B' => 'c'], 1), 'environment'];
        yield 'not JSON' => [static fn() => SidecarSpec::fromJson('{'), 'not JSON'];
        yield 'missing fields' => [static fn() => SidecarSpec::fromJson('{"name":"a"}'), 'needs name'];
        yield 'non-string argument' => [static fn() => SidecarSpec::fromJson('{"name":"a","command":[1],"env":{},"count":1}'), 'strings'];
    }

    /**
     * @param \Closure(): mixed $make
     * @dataProvider misuse
     */
    public function testMisuseIsRefusedWithAMessageThatSaysWhy(\Closure $make, string $message): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage($message);
        $make();
    }
}
