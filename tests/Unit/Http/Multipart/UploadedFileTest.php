<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Multipart;

use Kiln\Http\UploadedFile;
use PHPUnit\Framework\TestCase;

final class UploadedFileTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/kiln-uploaded-file-test-' . getmypid();
        @mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        foreach (glob($this->dir . '/*') ?: [] as $file) {
            unlink($file);
        }
        rmdir($this->dir);
    }

    private function upload(string $contents): UploadedFile
    {
        $path = (string) tempnam($this->dir, 'up-');
        file_put_contents($path, $contents);
        return new UploadedFile($path, 'a.txt', 'text/plain', \strlen($contents));
    }

    public function testMoveToMovesOnceAndLeavesNothingBehind(): void
    {
        $file = $this->upload('hello');
        $source = $file->path();
        $file->moveTo($this->dir . '/moved.txt');
        self::assertFileDoesNotExist($source);
        self::assertSame('hello', file_get_contents($this->dir . '/moved.txt'));
        self::assertTrue($file->isMoved());
        $file->discard(); // a moved file is the app's now
        self::assertFileExists($this->dir . '/moved.txt');
        $this->expectException(\Error::class);
        $file->moveTo($this->dir . '/again.txt');
    }

    public function testMoveToAFailingTargetThrowsAndKeepsTheFile(): void
    {
        $file = $this->upload('x');
        try {
            $file->moveTo($this->dir . '/no/such/dir/file');
            self::fail('moved into a missing directory');
        } catch (\Kiln\Http\HttpException) {
        }
        self::assertFalse($file->isMoved());
        self::assertSame('x', $file->contents());
    }

    public function testDiscardRemovesAnUnmovedFile(): void
    {
        $file = $this->upload('x');
        $path = $file->path();
        $file->discard();
        self::assertFileDoesNotExist($path);
    }

    public function testAFailedUploadHasNoFile(): void
    {
        $file = new UploadedFile('', 'big.bin', '', 0, \UPLOAD_ERR_INI_SIZE);
        self::assertFalse($file->isOk());
        $this->expectException(\Error::class);
        $file->contents();
    }
}
