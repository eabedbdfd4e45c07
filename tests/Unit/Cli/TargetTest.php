<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Cli;

use Kiln\Cli\Target;
use Kiln\Cli\UsageException;
use PHPUnit\Framework\TestCase;

final class TargetTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/kiln-target-' . bin2hex(random_bytes(4));
        mkdir($this->dir . '/site/public', 0777, true);
        mkdir($this->dir . '/app');
        mkdir($this->dir . '/plain');
        touch($this->dir . '/app/app.php');
        touch($this->dir . '/script.php');
        touch($this->dir . '/notes.txt');
    }

    protected function tearDown(): void
    {
        exec('rm -rf ' . escapeshellarg($this->dir));
    }

    public function testAPhpFileIsAScript(): void
    {
        $target = Target::resolve('script.php', $this->dir);
        self::assertSame(Target::SCRIPT, $target->kind);
        self::assertSame(realpath($this->dir . '/script.php'), $target->path);
    }

    public function testADirectoryWithAppPhpServesThatScript(): void
    {
        $target = Target::resolve($this->dir . '/app', '/');
        self::assertSame(Target::SCRIPT, $target->kind);
        self::assertSame(realpath($this->dir . '/app/app.php'), $target->path);
    }

    public function testADirectoryWithPublicServesPublicAsDocumentRoot(): void
    {
        $target = Target::resolve('site', $this->dir);
        self::assertSame(Target::DOCROOT, $target->kind);
        self::assertSame(realpath($this->dir . '/site/public'), $target->path);
    }

    public function testAPlainDirectoryIsItsOwnDocumentRoot(): void
    {
        $target = Target::resolve('plain/', $this->dir);
        self::assertSame(Target::DOCROOT, $target->kind);
        self::assertSame(realpath($this->dir . '/plain'), $target->path);
    }

    public function testAMissingPathIsAUsageError(): void
    {
        $this->expectException(UsageException::class);
        $this->expectExceptionMessage('does not exist');
        Target::resolve('nope', $this->dir);
    }

    public function testANonPhpFileIsAUsageError(): void
    {
        $this->expectException(UsageException::class);
        $this->expectExceptionMessage('not a .php script');
        Target::resolve('notes.txt', $this->dir);
    }
}
