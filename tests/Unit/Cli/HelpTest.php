<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Cli;

use Kiln\Cli\Application;
use Kiln\Cli\ServeOptions;
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
