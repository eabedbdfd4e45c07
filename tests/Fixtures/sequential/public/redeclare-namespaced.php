<?php

declare(strict_types=1);

// A braced namespace is no block: the class is declared at the file's top level.

namespace Kiln\Fixture\Sequential {
    final class Declared
    {
        public const NAME = 'namespaced';
    }

    echo Declared::NAME, ' ', getmypid();
}
