<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Static;

use Kiln\Http\Static\GzipStream;
use PHPUnit\Framework\TestCase;

final class GzipStreamTest extends TestCase
{
    public function testAFileIsGzippedPieceByPieceIntoOneValidStream(): void
    {
        $path = (string) tempnam(sys_get_temp_dir(), 'kiln-gz-');
        try {
            $data = '';
            for ($i = 0; $i < 20_000; $i++) {
                $data .= "line $i " . md5((string) $i) . "\n";
            }
            file_put_contents($path, $data);
            $pieces = iterator_to_array(GzipStream::pieces($path, 6), false);
            self::assertGreaterThan(1, \count($pieces), 'streamed, not compressed in one go');
            self::assertSame($data, gzdecode(implode('', $pieces)));
        } finally {
            @unlink($path);
        }
    }

    public function testAnEmptyFileIsAValidEmptyGzipStream(): void
    {
        $path = (string) tempnam(sys_get_temp_dir(), 'kiln-gz-');
        try {
            self::assertSame('', gzdecode(implode('', iterator_to_array(GzipStream::pieces($path, 1), false))));
        } finally {
            @unlink($path);
        }
    }
}
