<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Handler\Fixture;

use Kiln\Http\Request;

final class CountingController
{
    public static int $constructed = 0;

    public static int $staticCalls = 0;

    private int $calls = 0;

    public function __construct()
    {
        self::$constructed++;
    }

    public function show(int $id): string
    {
        $this->calls++;
        return "user $id, call $this->calls";
    }

    public static function about(Request $request): string
    {
        self::$staticCalls++;
        return 'about ' . $request->path();
    }

    /** @phpstan-ignore method.unused */
    private function hidden(): string
    {
        return 'hidden';
    }
}
