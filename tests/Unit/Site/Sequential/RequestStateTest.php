<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

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
}
