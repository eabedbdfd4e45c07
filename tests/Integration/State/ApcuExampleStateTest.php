<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\State;

/** The example's shared state on APCu (what `kiln serve` turns on by default). */
final class ApcuExampleStateTest extends ExampleStateTestCase
{
    protected static function phpOptions(): array
    {
        return ['-d', 'apc.enable_cli=1'];
    }
}
