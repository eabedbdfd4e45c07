<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Performance;

use Kiln\Site\PathResolver;
use PHPUnit\Framework\TestCase;

/**
 * PHP's tracing JIT compiles no trace through a call of a closure made from an internal function
 * (`opcache_is_script_cached(...)`): it aborts with "bad function call", and the method making the call runs in the
 * interpreter on every request. PathResolver's default check of opcache was such a closure, and kept resolve() and
 * walk() out of the JIT (`bench/jit-aborts bench/www-site /hello.php --tier=isolated`); it calls the function by name.
 */
final class NoInternalFunctionClosureOnTheHotPathTest extends TestCase
{
    public function testAPathResolverMadeWithItsDefaultsHoldsNoClosureOfAnInternalFunction(): void
    {
        $root = sys_get_temp_dir() . '/kiln-resolver-' . bin2hex(random_bytes(4));
        mkdir($root);
        try {
            self::assertSame([], self::internalClosures(new PathResolver($root)));
        } finally {
            rmdir($root);
        }
    }

    public function testTheCheckSeesOne(): void
    {
        $holder = new class {
            public \Closure $check;

            public function __construct()
            {
                $this->check = strlen(...);
            }
        };
        self::assertSame(['check'], self::internalClosures($holder));
    }

    /** @return list<string> names of the properties of $object that hold a closure of an internal function */
    private static function internalClosures(object $object): array
    {
        $found = [];
        foreach ((new \ReflectionObject($object))->getProperties() as $property) {
            if (!$property->isInitialized($object)) {
                continue;
            }
            $value = $property->getValue($object);
            if ($value instanceof \Closure && (new \ReflectionFunction($value))->isInternal()) {
                $found[] = $property->getName();
            }
        }
        return $found;
    }
}
