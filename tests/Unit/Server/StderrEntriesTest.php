<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\StderrEntries;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class StderrEntriesTest extends TestCase
{
    private const UNCAUGHT = "PHP Fatal error:  Uncaught RuntimeException: boom in /srv/x.php:2\nStack trace:\n"
        . "#0 /srv/x.php(3): f()\n#1 {main}\n\nNext LogicException: again in /srv/x.php:4\nStack trace:\n#0 {main}\n"
        . "  thrown in /srv/x.php on line 2\n";

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
        yield 'a blank line then a trace-like line is not the same entry' => ["PHP Warning:  a\n\n#1 not a frame\n",
            [['warning', 'PHP Warning:  a'], ['warning', '#1 not a frame']]];
        yield 'anything else is a warning' => ["plain error_log line\r\nto stderr directly\n",
            [['warning', 'plain error_log line'], ['warning', 'to stderr directly']]];
        yield 'lines join only a message of PHP' => ["my own line\n  indented\nNext step\n",
            [['warning', 'my own line'], ['warning', '  indented'], ['warning', 'Next step']]];
        yield 'a line after a warning that only looks like the next of a chain' => ["PHP Warning:  w\nNext step\n",
            [['warning', 'PHP Warning:  w'], ['warning', 'Next step']]];
        yield 'a line that looks like a level elsewhere is still a warning' => ["my PHP Fatal error:  no\n", [['warning', 'my PHP Fatal error:  no']]];
        yield 'blank lines are no entries' => ["\n\n  \n", []];
    }

    /** @param list<array{string, string}> $expected */
    #[DataProvider('cases')]
    public function testWhole(string $bytes, array $expected): void
    {
        $entries = new StderrEntries();
        self::assertSame($expected, [...$entries->feed($bytes), ...$entries->flush()]);
        self::assertFalse($entries->holding());
    }

    /**
     * Fed a byte at a time (as many reads as bytes), the entries are the same: a message stays open across reads.
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
        self::assertSame($expected, [...$got, ...$entries->finish()]);
    }

    public function testAMessageIsHeldOpenUntilALineStartsAnotherOrItIsFlushed(): void
    {
        $entries = new StderrEntries();
        self::assertSame([], $entries->feed("PHP Fatal error:  Uncaught E\nStack trace:\n"));
        self::assertTrue($entries->holding());
        self::assertSame([], $entries->feed("#0 {main}\n"), 'PHP wrote the rest of the trace in another piece');
        self::assertSame([['error', "PHP Fatal error:  Uncaught E\nStack trace:\n#0 {main}"]], $entries->feed("PHP Warning:  next\n"));
        self::assertSame([['warning', 'PHP Warning:  next']], $entries->flush());
        self::assertSame([], $entries->flush());
    }

    public function testFinishFilesWhatIsLeftWithoutANewline(): void
    {
        $entries = new StderrEntries();
        self::assertSame([], $entries->feed("PHP Warning:  w\nPHP Fatal error:  Allowed memory size exhausted"));
        self::assertSame([['warning', 'PHP Warning:  w'], ['error', 'PHP Fatal error:  Allowed memory size exhausted']], $entries->finish());
        self::assertSame([], $entries->finish());
    }

    public function testALongStackTraceInPiecesOf8KiBIsOneEntry(): void
    {
        $trace = "PHP Fatal error:  Uncaught E in /srv/x.php:2\nStack trace:\n";
        for ($i = 0; $i < 400; $i++) {
            $trace .= "#$i /srv/app/vendor/framework/src/Some/Deep/Component.php(123): Some\\Deep\\Component->call()\n";
        }
        $trace .= "#400 {main}\n  thrown in /srv/x.php on line 2\n";
        $entries = new StderrEntries();
        $got = [];
        foreach (str_split($trace, 8192) as $piece) {
            array_push($got, ...$entries->feed($piece));
        }
        array_push($got, ...$entries->flush());
        self::assertSame([['error', rtrim($trace)]], $got);
    }

    public function testNoEntryIsLongerThanTheBoundAndNothingIsDropped(): void
    {
        foreach (['without its newline yet' => '', 'with its newline' => "\n"] as $case => $end) {
            $entries = new StderrEntries();
            $long = str_repeat('x', StderrEntries::MAX_ENTRY - 1) . str_repeat('y', StderrEntries::MAX_ENTRY + 10);
            $got = [...$entries->feed(substr($long, 0, StderrEntries::MAX_ENTRY - 1)), ...$entries->feed(substr($long, StderrEntries::MAX_ENTRY - 1) . $end), ...$entries->finish()];
            self::assertGreaterThan(1, \count($got), $case);
            foreach ($got as [, $message]) {
                self::assertLessThanOrEqual(StderrEntries::MAX_ENTRY, \strlen($message), $case);
            }
            self::assertSame($long, implode('', array_column($got, 1)), $case);
        }
    }

    public function testAStackTraceIsNotJoinedBeyondTheBound(): void
    {
        $frame = '#0 ' . str_repeat('a', 1000);
        $bytes = "PHP Fatal error:  Uncaught E\n" . str_repeat("$frame\n", 100);
        $entries = new StderrEntries();
        $got = [...$entries->feed($bytes), ...$entries->flush()];
        self::assertGreaterThan(1, \count($got));
        foreach ($got as [, $message]) {
            self::assertLessThanOrEqual(StderrEntries::MAX_ENTRY, \strlen($message));
        }
        self::assertSame(rtrim($bytes), implode("\n", array_column($got, 1)));
    }
}
