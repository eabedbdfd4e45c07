<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App;

use Kiln\App\HttpErrorException;
use PHPUnit\Framework\TestCase;

final class HttpErrorAliasTest extends TestCase
{
    public function testTheDeprecatedHttpErrorNameStillThrowsAndCatchesAsHttpErrorException(): void
    {
        $old = 'Kiln\App\HttpError';
        try {
            throw new $old(404, 'gone');
        } catch (HttpErrorException $e) {
            self::assertSame(404, $e->status);
        }
        self::assertTrue(class_exists($old));
    }
}
