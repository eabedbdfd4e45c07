<?php

declare(strict_types=1);

// A braced namespace is no existence check: a second run would declare the class again.

namespace Kiln\Fixture\Sequential {
    final class Declared
    {
        public const NAME = 'namespaced';
    }

    echo Declared::NAME, ' ', getmypid();
}
