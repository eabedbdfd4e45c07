<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Handler\Fixture;

use Kiln\Http\Request;

final class ShowUser
{
    public function __invoke(Request $request, int $id): string
    {
        return "user $id at " . $request->path();
    }

    public function plain(string $name): string
    {
        return "hello $name";
    }
}
