<?php

declare(strict_types=1);

namespace Kiln;

final class Kiln
{
    public const VERSION = '0.1.0';

    /**
     * The tracing JIT as Kiln turns it on in the PHP it starts: the workers (Cli\JitLauncher) and the
     * isolated tier's php-cgi children. `kiln serve --jit=off` leaves both as PHP's ini files say.
     */
    public const JIT = ['opcache.jit_buffer_size' => '64M', 'opcache.jit' => 'tracing'];
}
