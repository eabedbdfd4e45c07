<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Cli;

use Kiln\Cli\SourceWatch;
use Kiln\Cli\Target;
use Kiln\Server\Log;
use Kiln\Server\LogFile;
use PHPUnit\Framework\TestCase;

final class SourceWatchTest extends TestCase
{
    private string $dir;

    private string $logPath;

    private SourceWatch $watch;

    /** The time given to poll(): each call a second later, so that no call is skipped as too early. */
    private float $now = 0.0;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/kiln-source-watch-' . bin2hex(random_bytes(4));
        mkdir("$this->dir/api", 0777, true);
        mkdir("$this->dir/.git", 0777, true);
        file_put_contents("$this->dir/app.php", "<?php\nreturn 1;\n");
        file_put_contents("$this->dir/api/users.php", "<?php\nreturn 2;\n");
        file_put_contents("$this->dir/readme.txt", 'not PHP');
        $this->logPath = "$this->dir.log";
        $file = new LogFile($this->logPath);
        $file->open();
        $this->watch = new SourceWatch($this->dir, new Log($file));
    }

    protected function tearDown(): void
    {
        exec('rm -rf ' . escapeshellarg($this->dir) . ' ' . escapeshellarg($this->logPath));
    }

    public function testNothingChangedAsksForNoReload(): void
    {
        self::assertFalse($this->poll());
        self::assertFalse($this->poll());
    }

    public function testAnEditOfTheSameSizeWithinTheSameSecondIsSeen(): void
    {
        $this->poll();
        $mtime = (int) filemtime("$this->dir/api/users.php");
        file_put_contents("$this->dir/api/users.php", "<?php\nreturn 3;\n");
        touch("$this->dir/api/users.php", $mtime);
        self::assertTrue($this->poll());
        self::assertStringContainsString('--watch: api/users.php changed: reloading the workers', $this->log());
        self::assertFalse($this->poll());
    }

    public function testAddedAndRemovedFilesReload(): void
    {
        file_put_contents("$this->dir/api/posts.php", "<?php\nreturn 4;\n");
        self::assertTrue($this->poll());
        unlink("$this->dir/api/posts.php");
        self::assertTrue($this->poll());
    }

    public function testFilesOtherThanPhpAndHiddenDirectoriesAreNotWatched(): void
    {
        file_put_contents("$this->dir/readme.txt", 'edited');
        file_put_contents("$this->dir/.git/hook.php", "<?php\n");
        self::assertFalse($this->poll());
    }

    public function testABrokenFileIsReportedOnceWithItsLineAndReloadsOnlyOnceFixed(): void
    {
        file_put_contents("$this->dir/app.php", "<?php\n\nreturn [1, 2;\n");
        self::assertFalse($this->poll());
        self::assertMatchesRegularExpression('~--watch: Parse error: .* in ' . preg_quote("$this->dir/app.php", '~') . ' on line 3; the workers keep serving the previous code~', $this->log());
        file_put_contents("$this->dir/api/users.php", "<?php\nreturn 'another edit';\n");
        self::assertFalse($this->poll(), 'no reload while a file does not compile');
        self::assertSame(1, substr_count($this->log(), 'Parse error'));
        file_put_contents("$this->dir/app.php", "<?php\n\nreturn [1, 2];\n");
        self::assertTrue($this->poll());
    }

    public function testTheFolderOfAnAppScriptIsItsDirectory(): void
    {
        self::assertSame($this->dir, SourceWatch::folderOf(new Target("$this->dir/app.php", Target::SCRIPT)));
        self::assertSame($this->dir, SourceWatch::folderOf(new Target($this->dir, Target::DOCROOT)));
    }

    private function poll(): bool
    {
        $this->now += 1.0;
        return $this->watch->poll($this->now);
    }

    private function log(): string
    {
        return (string) file_get_contents($this->logPath);
    }
}
