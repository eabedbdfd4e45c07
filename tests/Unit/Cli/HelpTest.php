<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Cli;

use Kiln\Cli\Application;
use Kiln\Cli\Help;
use Kiln\Cli\ServeOptions;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** `kiln help` names every option `kiln serve` accepts, so none exists only in the docs. */
final class HelpTest extends TestCase
{
    public function testHelpListsEveryServeOption(): void
    {
        $help = $this->help();
        foreach ([...ServeOptions::VALUED, ...ServeOptions::FLAGS] as $option) {
            self::assertMatchesRegularExpression('/^\s+--' . preg_quote($option, '/') . '[= ]/m', $help, "--$option is missing from kiln help");
        }
        self::assertStringContainsString('--' . ServeOptions::LIMIT_PREFIX . 'NAME=VALUE', $help);
    }

    /** @return iterable<string, array{string, string}> */
    public static function commands(): iterable
    {
        yield 'serve' => ['serve', '--limit-NAME=VALUE'];
        yield 'stop' => ['stop', '--graceful'];
        yield 'reload' => ['reload', 'SIGHUP'];
        yield 'status' => ['status', '--json'];
    }

    #[DataProvider('commands')]
    public function testACommandAskedForHelpShowsItsOwnAndRunsNothing(string $command, string $shown): void
    {
        foreach (['--help', '-h'] as $ask) {
            $out = fopen('php://memory', 'w+');
            $err = fopen('php://memory', 'w+');
            self::assertIsResource($out);
            self::assertIsResource($err);
            // With a PATH and an option before it, as one types it when a command line went wrong.
            $args = $command === 'serve' ? ['/nowhere', '--workers=0', $ask] : ['--listen=127.0.0.1:1', $ask];
            self::assertSame(0, (new Application($out, $err))->run(['kiln', $command, ...$args], [], '/'));
            rewind($out);
            rewind($err);
            $help = (string) stream_get_contents($out);
            self::assertStringStartsWith("Usage:\n  kiln $command ", $help);
            self::assertStringContainsString($shown, $help);
            self::assertSame('', stream_get_contents($err));
        }
    }

    public function testAHelpOptionAfterTheEndOfOptionsIsAnArgument(): void
    {
        self::assertFalse(Help::asked(['--', '--help']));
        self::assertTrue(Help::asked(['x', '-h']));
    }

    private function help(): string
    {
        $out = fopen('php://memory', 'w+');
        $err = fopen('php://memory', 'w+');
        self::assertIsResource($out);
        self::assertIsResource($err);
        self::assertSame(0, (new Application($out, $err))->run(['kiln', 'help'], [], (string) getcwd()));
        rewind($out);
        return (string) stream_get_contents($out);
    }
}
