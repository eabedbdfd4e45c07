<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\State;

/** The example's shared state on the /dev/shm table, as on a PHP without APCu. */
final class TableExampleStateTest extends ExampleStateTestCase
{
    protected static function phpOptions(): array
    {
        return ['-d', 'apc.enable_cli=0'];
    }
}
