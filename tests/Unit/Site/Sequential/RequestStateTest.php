<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

use Kiln\Site\Sequential\Engine\CwdWatch;
use Kiln\Site\Sequential\Engine\SavedUmask;
use Kiln\Site\Sequential\RequestState;
use PHPUnit\Framework\TestCase;

final class RequestStateTest extends TestCase
{
    private string $cwd;

    private int $umask;

    /** @var array<mixed> */
    private array $globals;

    protected function setUp(): void
    {
        $this->cwd = (string) getcwd();
        $this->umask = umask();
        $this->globals = ['argv' => $GLOBALS['argv'] ?? null, 'argc' => $GLOBALS['argc'] ?? null];
    }

    protected function tearDown(): void
    {
        chdir($this->cwd);
        umask($this->umask);
        foreach ($this->globals as $name => $value) {
            $GLOBALS[$name] = $value;
        }
    }

    public function testTheScriptRunsInItsDirectoryAndTheWorkerGetsItsOwnBackWhereverTheScriptWent(): void
    {
        $state = new RequestState();
        $dir = (string) realpath(sys_get_temp_dir());
        $state->begin($dir);
        self::assertSame($dir, getcwd());
        chdir('/');
        umask(0o077);
        $state->end();
        self::assertSame($this->cwd, getcwd());
        self::assertSame($this->umask, umask());
    }

    public function testAScriptInTheWorkersOwnDirectoryThatMovesIsPutBack(): void
    {
        $state = new RequestState();
        $state->begin($this->cwd);
        chdir('/');
        $state->end();
        self::assertSame($this->cwd, getcwd());
    }

    public function testTheCwdWatchSeesEveryWayAScriptCanLeaveTheDirectory(): void
    {
        $watch = CwdWatch::find();
        self::assertNotNull($watch, 'BG(CurrentStatFile) is found on this PHP');
        $state = new RequestState(null, null, $watch);
        $moves = [
            'chdir only' => static fn() => chdir('/'),
            'chdir, then a stat of an absolute path' => static function (): void {
                chdir('/');
                is_file('/etc/hostname');
            },
            'chdir, then a stat of a relative path' => static function (): void {
                chdir('/');
                file_exists('etc');
            },
            'chdir, then clearstatcache()' => static function (): void {
                chdir('/');
                clearstatcache();
            },
            'chdir twice, then a stat of the new directory' => static function (): void {
                chdir('/');
                chdir('/tmp');
                is_dir('.');
            },
        ];
        foreach ($moves as $what => $move) {
            $state->begin($this->cwd);
            $move();
            $state->end();
            self::assertSame($this->cwd, getcwd(), $what);
        }
    }

    public function testTheCwdWatchTellsAScriptThatStayedWithoutAskingTheKernel(): void
    {
        $watch = CwdWatch::find();
        self::assertNotNull($watch);
        $watch->arm();
        self::assertTrue($watch->untouched(), 'nothing ran');
        is_file(__FILE__);
        self::assertFalse($watch->untouched(), 'a stat of another file: not known, so getcwd() decides');
        $watch->arm();
        chdir($this->cwd);
        self::assertFalse($watch->untouched(), 'chdir() drops the marker, even to the same directory');
    }

    public function testADestructorOfAScriptGlobalStillSeesTheOtherGlobals(): void
    {
        $state = new RequestState();
        $state->begin($this->cwd);
        // As a script's top level would: a logger that reads the config global when it is destroyed.
        $GLOBALS['kilnTestLogger'] = new class {
            public function __destruct()
            {
                echo json_encode($GLOBALS['kilnTestConfig'] ?? null);
            }
        };
        $GLOBALS['kilnTestConfig'] = ['log' => '/tmp/x'];
        ob_start();
        $state->unsetScriptGlobals();
        $printed = ob_get_clean();
        $state->end();
        self::assertSame('{"log":"\/tmp\/x"}', $printed, 'php-fpm keeps the other globals while destructors run');
        self::assertArrayNotHasKey('kilnTestLogger', $GLOBALS);
        self::assertArrayNotHasKey('kilnTestConfig', $GLOBALS);
    }

    public function testEveryRequestStartsWithAnEmptyStatCache(): void
    {
        $file = tempnam(sys_get_temp_dir(), 'kiln-stat-');
        $link = $file . '.link';
        file_put_contents($file, 'abc');
        try {
            foreach ([null, CwdWatch::find()] as $watch) {
                $state = new RequestState(null, null, $watch);
                $state->begin($this->cwd);
                self::assertSame(3, filesize($file));
                self::assertFalse(is_link($link));
                $state->end();
                file_put_contents($file, 'abcdefgh'); // another process writes meanwhile
                symlink($file, $link);
                $state->begin($this->cwd);
                self::assertSame(8, filesize($file), 'a size the previous request saw is not served from the cache');
                self::assertTrue(is_link($link), 'nor an lstat() answer');
                $state->end();
                unlink($link);
                file_put_contents($file, 'abc');
            }
        } finally {
            @unlink($link);
            unlink($file);
        }
    }

    public function testTheUmaskIsReadFromPhpsOwnFieldAndPutBackOnlyAfterAScriptThatChangedIt(): void
    {
        $saved = SavedUmask::find();
        self::assertNotNull($saved, 'BG(umask) is found on this PHP');
        $state = new RequestState(null, $saved);
        self::assertFalse($saved->changed());
        $state->begin($this->cwd);
        $state->end();
        self::assertFalse($saved->changed());
        self::assertSame($this->umask, umask(), 'umask() itself marks the field');
        self::assertTrue($saved->changed());
        $saved->clear();
        $state->begin($this->cwd);
        umask(0);
        self::assertTrue($saved->changed());
        $state->end();
        self::assertSame($this->umask, umask(), "the script's umask(0) did not outlive it");
        $saved->clear();
        $state->begin($this->cwd);
        umask(0o022 === $this->umask ? 0o027 : 0o022);
        umask(0); // a second call: PHP keeps the first mask it saw, the field stays set
        $state->end();
        self::assertSame($this->umask, umask());
    }

    public function testFindingTheFieldLeavesTheIniSettingItProbesAsItWas(): void
    {
        $before = ini_get('unserialize_max_depth');
        SavedUmask::find();
        self::assertSame($before, ini_get('unserialize_max_depth'));
    }
}
