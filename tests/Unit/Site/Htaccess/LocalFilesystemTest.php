<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use Kiln\Site\Htaccess\HtaccessRules;
use Kiln\Site\Htaccess\LocalFilesystem;
use PHPUnit\Framework\TestCase;

final class LocalFilesystemTest extends TestCase
{
    private string $dir = '';

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/kiln-htaccess-' . bin2hex(random_bytes(4));
        mkdir($this->dir . '/sub', 0o755, true);
        file_put_contents($this->dir . '/a.txt', 'abc');
        file_put_contents($this->dir . '/empty', '');
        symlink($this->dir . '/a.txt', $this->dir . '/link');
    }

    protected function tearDown(): void
    {
        foreach (['link', 'a.txt', 'empty', '.htaccess'] as $file) {
            @unlink($this->dir . '/' . $file);
        }
        rmdir($this->dir . '/sub');
        rmdir($this->dir);
    }

    public function testAnswersAboutFilesDirectoriesAndLinks(): void
    {
        $fs = new LocalFilesystem();
        self::assertTrue($fs->isFile($this->dir . '/a.txt'));
        self::assertFalse($fs->isFile($this->dir . '/sub'));
        self::assertTrue($fs->isDirectory($this->dir . '/sub'));
        self::assertTrue($fs->isLink($this->dir . '/link'));
        self::assertFalse($fs->isLink($this->dir . '/a.txt'));
        self::assertFalse($fs->isExecutable($this->dir . '/a.txt'));
        self::assertSame(3, $fs->size($this->dir . '/a.txt'));
        self::assertSame(0, $fs->size($this->dir . '/empty'));
        self::assertNull($fs->size($this->dir . '/nope'));
        self::assertNull($fs->stamp($this->dir . '/sub'));
        self::assertNull($fs->read($this->dir . '/nope'));
        self::assertSame('abc', $fs->read($this->dir . '/a.txt'));
    }

    public function testTheStampChangesWithTheFile(): void
    {
        $fs = new LocalFilesystem();
        $before = $fs->stamp($this->dir . '/a.txt');
        self::assertNotNull($before);
        file_put_contents($this->dir . '/a.txt', 'abcd');
        self::assertNotSame($before, $fs->stamp($this->dir . '/a.txt'));
    }

    public function testRulesReadARealDocumentRoot(): void
    {
        file_put_contents($this->dir . '/.htaccess', "<Files a.txt>\nRequire all denied\n</Files>\n");
        $rules = new HtaccessRules($this->dir);
        self::assertSame('refuse 403', Fixtures::describe($rules->forRequest(Fixtures::request('/a.txt'))));
        self::assertSame('serve /empty', Fixtures::describe($rules->forRequest(Fixtures::request('/empty'))));
    }

    public function testTheRootMustBeAbsolute(): void
    {
        $this->expectException(\ValueError::class);
        new HtaccessRules('relative/root');
    }
}
