<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential\Engine;

use Kiln\Site\Sequential\Engine\Native;
use PHPUnit\Framework\TestCase;

final class NativeTest extends TestCase
{
    public function testAGlobalTheBinaryDoesNotExportFailsAloneAndTheOthersStillResolve(): void
    {
        $native = Native::get();
        if ($native === null) {
            self::fail('needs ext-ffi: scripts/install-deps.sh installs it');
        }
        try {
            $native->symbol('kiln_no_such_global');
            self::fail('a missing global resolved');
        } catch (\FFI\Exception) {
            // expected: only this global is unavailable
        }
        self::assertSame($native, Native::get(), 'the FFI view stays usable');
        $base = $native->symbol('sapi_globals');
        self::assertTrue($native->readable($base, 16));
        self::assertSame($base, $native->symbol('sapi_globals'), 'resolved once, the same address');
    }

    public function testOnlyACGlobalNameIsAccepted(): void
    {
        $native = Native::get();
        if ($native === null) {
            self::fail('needs ext-ffi: scripts/install-deps.sh installs it');
        }
        $this->expectException(\Error::class);
        $native->symbol('x[]; extern int y');
    }
}
