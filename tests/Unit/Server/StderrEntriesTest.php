<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\StderrEntries;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class StderrEntriesTest extends TestCase
{
    private const UNCAUGHT = "PHP Fatal error:  Uncaught RuntimeException: boom in /srv/x.php:2\nStack trace:\n"
        . "#0 /srv/x.php(3): f()\n#1 {main}\n\nNext LogicException: again in /srv/x.php:4\n  thrown in /srv/x.php on line 2\n";

    /** @return iterable<string, array{string, list<array{string, string}>}> */
    public static function cases(): iterable
    {
        yield 'a warning' => ["PHP Warning:  Undefined variable \$a in /srv/w.php on line 2\n",
            [['warning', 'PHP Warning:  Undefined variable $a in /srv/w.php on line 2']]];
        yield 'a notice and a deprecation are info' => ["PHP Notice:  n\nPHP Deprecated:  d\nPHP Strict Standards:  s\n",
            [['info', 'PHP Notice:  n'], ['info', 'PHP Deprecated:  d'], ['info', 'PHP Strict Standards:  s']]];
        yield 'errors' => ["PHP Parse error:  p\nPHP Recoverable fatal error:  r\nPHP Fatal error:  f\n",
            [['error', 'PHP Parse error:  p'], ['error', 'PHP Recoverable fatal error:  r'], ['error', 'PHP Fatal error:  f']]];
        yield 'an uncaught exception is one entry, with the exception chained to it' => [self::UNCAUGHT,
            [['error', rtrim(self::UNCAUGHT)]]];
        yield 'a blank line before a new message ends the entry before it' => ["PHP Warning:  a\n\nPHP Notice:  b\n",
            [['warning', 'PHP Warning:  a'], ['info', 'PHP Notice:  b']]];
        yield 'anything else is a warning' => ["plain error_log line\r\nto stderr directly\n",
            [['warning', 'plain error_log line'], ['warning', 'to stderr directly']]];
        yield 'a line that looks like a level elsewhere is still a warning' => ["my PHP Fatal error:  no\n", [['warning', 'my PHP Fatal error:  no']]];
        yield 'blank lines are no entries' => ["\n\n  \n", []];
        yield 'a line without its newline waits' => ['PHP Warning:  not yet', []];
    }

    /** @param list<array{string, string}> $expected */
    #[DataProvider('cases')]
    public function testWhole(string $bytes, array $expected): void
    {
        self::assertSame($expected, (new StderrEntries())->feed($bytes));
    }

    /**
     * Fed a byte at a time, every line is an entry of its own (continuations are joined only within one read) and
     * nothing is lost or changed.
     *
     * @param list<array{string, string}> $expected
     */
    #[DataProvider('cases')]
    public function testByteByByte(string $bytes, array $expected): void
    {
        $entries = new StderrEntries();
        $got = [];
        foreach (str_split($bytes) as $byte) {
            array_push($got, ...$entries->feed($byte));
        }
        $lines = array_values(array_filter(
            array_merge(...array_map(static fn(array $entry): array => explode("\n", $entry[1]), $expected)),
            static fn(string $line): bool => $line !== '',
        ));
        self::assertSame($lines, array_column($got, 1));
        self::assertSame($expected === [] ? [] : [$expected[0][0]], \array_slice(array_column($got, 0), 0, $expected === [] ? 0 : 1));
    }

    public function testFinishFilesWhatIsLeftWithoutANewline(): void
    {
        $entries = new StderrEntries();
        self::assertSame([], $entries->feed('PHP Fatal error:  Allowed memory size exhausted'));
        self::assertSame([['error', 'PHP Fatal error:  Allowed memory size exhausted']], $entries->finish());
        self::assertSame([], $entries->finish());
    }

    public function testALineLongerThanTheBoundIsFiledInPiecesAndNothingIsDropped(): void
    {
        $entries = new StderrEntries();
        $long = str_repeat('x', StderrEntries::MAX_ENTRY * 2 + 10);
        $got = [];
        foreach (str_split($long, 4096) as $piece) {
            array_push($got, ...$entries->feed($piece));
        }
        self::assertCount(2, $got);
        self::assertSame(StderrEntries::MAX_ENTRY, \strlen($got[0][1]));
        array_push($got, ...$entries->feed("tail\n"));
        self::assertSame($long . 'tail', implode('', array_column($got, 1)));
    }

    public function testAStackTraceIsNotJoinedBeyondTheBound(): void
    {
        $frame = '#0 ' . str_repeat('a', 1000);
        $bytes = "PHP Fatal error:  Uncaught E\n" . str_repeat("$frame\n", 100);
        $got = (new StderrEntries())->feed($bytes);
        self::assertGreaterThan(1, \count($got));
        foreach ($got as [, $message]) {
            self::assertLessThanOrEqual(StderrEntries::MAX_ENTRY, \strlen($message));
        }
        self::assertSame(rtrim($bytes), implode("\n", array_column($got, 1)));
    }
}
