<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Cli;

use Kiln\Cli\Requirements;
use PHPUnit\Framework\TestCase;

final class RequirementsTest extends TestCase
{
    public function testNothingMissingIsNoProblem(): void
    {
        $requirements = new Requirements(static fn(string $name): bool => true);
        self::assertSame([], $requirements->missing());
        self::assertNull($requirements->problem());
    }

    public function testTheMissingOnesAreNamed(): void
    {
        $requirements = new Requirements(static fn(string $name): bool => !\in_array($name, ['ctype', 'tokenizer'], true));
        self::assertSame(['ctype', 'tokenizer'], $requirements->missing());
        self::assertStringContainsString('lacks the extensions ctype, tokenizer, which Kiln needs', (string) $requirements->problem());
    }

    public function testThisPhpHasThem(): void
    {
        self::assertSame([], Requirements::ofThisPhp()->missing(), 'the test suite runs on a PHP that can run Kiln');
    }
}
