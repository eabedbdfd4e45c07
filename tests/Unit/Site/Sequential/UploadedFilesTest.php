<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

use Kiln\Http\UploadedFile;
use Kiln\Site\Sequential\UploadedFiles;
use PHPUnit\Framework\TestCase;

final class UploadedFilesTest extends TestCase
{
    public function testAFlatFieldGetsTheSixAttributesInPhpsOrder(): void
    {
        $paths = [];
        $files = UploadedFiles::toGlobal(['doc' => new UploadedFile('/tmp/x1', 'a.txt', 'text/plain', 5)], $paths);
        self::assertSame(['doc' => [
            'name' => 'a.txt', 'full_path' => 'a.txt', 'type' => 'text/plain', 'tmp_name' => '/tmp/x1', 'error' => 0, 'size' => 5,
        ]], $files);
        self::assertSame(['/tmp/x1'], $paths);
    }

    public function testFullPathKeepsTheFoldersOfAFolderUploadAndNameDoesNot(): void
    {
        $files = UploadedFiles::toGlobal(['d' => [new UploadedFile('/tmp/x1', 'x.jpg', 'image/jpeg', 3, \UPLOAD_ERR_OK, 'photos/2024/x.jpg')]]);
        self::assertSame(['x.jpg'], $files['d']['name']);
        self::assertSame(['photos/2024/x.jpg'], $files['d']['full_path']);
    }

    public function testANestedFieldPutsTheAttributeSecondAsPhpDoes(): void
    {
        $paths = [];
        $files = UploadedFiles::toGlobal(['a' => ['b' => [
            new UploadedFile('/tmp/x1', 'one.txt', 'text/plain', 1),
            new UploadedFile('/tmp/x2', 'two.bin', 'application/octet-stream', 2),
        ]]], $paths);
        self::assertSame(['name', 'full_path', 'type', 'tmp_name', 'error', 'size'], array_keys($files['a']));
        self::assertSame(['b' => ['one.txt', 'two.bin']], $files['a']['name']);
        self::assertSame(['b' => ['/tmp/x1', '/tmp/x2']], $files['a']['tmp_name']);
        self::assertSame(['b' => [1, 2]], $files['a']['size']);
        self::assertSame(['/tmp/x1', '/tmp/x2'], $paths, 'each path once');
    }

    public function testAFailedUploadHasNoTemporaryFileAndAnEmptyFieldHasNoType(): void
    {
        $paths = [];
        $files = UploadedFiles::toGlobal([
            'big' => new UploadedFile('', 'huge.iso', 'application/octet-stream', 0, \UPLOAD_ERR_INI_SIZE),
            'none' => new UploadedFile('', '', 'application/octet-stream', 0, \UPLOAD_ERR_NO_FILE),
        ], $paths);
        self::assertSame(['name' => 'huge.iso', 'full_path' => 'huge.iso', 'type' => 'application/octet-stream', 'tmp_name' => '',
            'error' => \UPLOAD_ERR_INI_SIZE, 'size' => 0], $files['big']);
        self::assertSame(['name' => '', 'full_path' => '', 'type' => '', 'tmp_name' => '', 'error' => \UPLOAD_ERR_NO_FILE, 'size' => 0], $files['none']);
        self::assertSame([], $paths);
    }
}
