<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/** For a TestCase that checks what several processes do at once on shared state. */
trait ForkedChildren
{
    /**
     * Runs $body($c) in $count forked processes at once ($c = 0 … $count - 1) and fails unless each returns
     * normally; what a child threw goes to stderr.
     *
     * @param \Closure(int): mixed $body
     */
    protected function inChildren(int $count, \Closure $body): void
    {
        $children = [];
        for ($c = 0; $c < $count; $c++) {
            $pid = pcntl_fork();
            self::assertNotSame(-1, $pid, 'fork');
            if ($pid === 0) {
                $code = 0;
                try {
                    $body($c);
                } catch (\Throwable $e) {
                    fwrite(\STDERR, (string) $e);
                    $code = 1;
                }
                // Leave without PHPUnit's shutdown handlers (they belong to the parent).
                pcntl_exec(PHP_BINARY, ['-n', '-r', "exit($code);"]);
                posix_kill((int) getmypid(), SIGKILL);
            }
            $children[] = $pid;
        }
        foreach ($children as $pid) {
            $status = 0;
            pcntl_waitpid($pid, $status);
            \assert(\is_int($status));
            self::assertTrue(pcntl_wifexited($status) && pcntl_wexitstatus($status) === 0, 'a child failed');
        }
    }
}
