<?php

declare(strict_types=1);

namespace Kiln;

final class Kiln
{
    public const VERSION = '0.1.0';
}
