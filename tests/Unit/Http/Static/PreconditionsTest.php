<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Static;

use Kiln\Http\Static\EntityTags;
use Kiln\Http\Static\HttpDate;
use Kiln\Http\Static\Precondition;
use Kiln\Http\Static\Preconditions;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** Conditional request headers against a file tagged "abc" and last modified at MODIFIED (RFC 9110 §13). */
final class PreconditionsTest extends TestCase
{
    private const ETAG = '"abc"';

    private const MODIFIED = 1_700_000_000;

    private const NOW = 1_800_000_000;

    /** @return iterable<string, array{Precondition, array<string, list<string>>, 2?: string}> verdict, headers, method */
    public static function cases(): iterable
    {
        $at = HttpDate::format(self::MODIFIED);
        $before = HttpDate::format(self::MODIFIED - 1);
        $after = HttpDate::format(self::MODIFIED + 1);
        $future = HttpDate::format(self::NOW + 3600);
        $proceed = Precondition::Proceed;
        $notModified = Precondition::NotModified;
        $failed = Precondition::Failed;

        yield 'no conditions' => [$proceed, []];
        // If-None-Match: weak comparison, lists, *.
        yield 'INM same tag' => [$notModified, ['if-none-match' => ['"abc"']]];
        yield 'INM weak form of the tag' => [$notModified, ['if-none-match' => ['W/"abc"']]];
        yield 'INM other tag' => [$proceed, ['if-none-match' => ['"xyz"']]];
        yield 'INM list containing the tag' => [$notModified, ['if-none-match' => ['"x", "abc" , W/"y"']]];
        yield 'INM list over two lines' => [$notModified, ['if-none-match' => ['"x"', '"abc"']]];
        yield 'INM list without the tag' => [$proceed, ['if-none-match' => ['"x", W/"y"']]];
        yield 'INM star' => [$notModified, ['if-none-match' => ['*']]];
        yield 'INM unquoted tag is not the tag' => [$proceed, ['if-none-match' => ['abc']]];
        yield 'INM tag differing in case' => [$proceed, ['if-none-match' => ['"ABC"']]];
        yield 'INM on POST fails' => [$failed, ['if-none-match' => ['"abc"']], 'POST'];
        yield 'INM on HEAD is 304' => [$notModified, ['if-none-match' => ['"abc"']], 'HEAD'];
        // If-Modified-Since.
        yield 'IMS at the modification time' => [$notModified, ['if-modified-since' => [$at]]];
        yield 'IMS after the modification time' => [$notModified, ['if-modified-since' => [$after]]];
        yield 'IMS before the modification time' => [$proceed, ['if-modified-since' => [$before]]];
        yield 'IMS in the future is ignored' => [$proceed, ['if-modified-since' => [$future]]];
        yield 'IMS not a date' => [$proceed, ['if-modified-since' => ['yesterday']]];
        yield 'IMS in RFC 850 form' => [$notModified, ['if-modified-since' => [gmdate('l, d-M-y H:i:s', self::MODIFIED) . ' GMT']]];
        yield 'IMS in asctime form' => [$notModified, ['if-modified-since' => [gmdate('D M j H:i:s Y', self::MODIFIED)]]];
        yield 'IMS twice is ignored' => [$proceed, ['if-modified-since' => [$at, $at]]];
        yield 'IMS ignored on POST' => [$proceed, ['if-modified-since' => [$at]], 'POST'];
        // If-None-Match wins over If-Modified-Since (§13.2.2).
        yield 'INM not matching beats a fresh IMS' => [$proceed, ['if-none-match' => ['"x"'], 'if-modified-since' => [$after]]];
        yield 'INM matching beats a stale IMS' => [$notModified, ['if-none-match' => ['"abc"'], 'if-modified-since' => [$before]]];
        // If-Match: strong comparison.
        yield 'IM same tag' => [$proceed, ['if-match' => ['"abc"']]];
        yield 'IM star' => [$proceed, ['if-match' => ['*']]];
        yield 'IM list containing the tag' => [$proceed, ['if-match' => ['"x", "abc"']]];
        yield 'IM other tag' => [$failed, ['if-match' => ['"xyz"']]];
        yield 'IM weak tag never matches' => [$failed, ['if-match' => ['W/"abc"']]];
        yield 'IM malformed' => [$failed, ['if-match' => ['abc']]];
        // If-Unmodified-Since.
        yield 'IUS at the modification time' => [$proceed, ['if-unmodified-since' => [$at]]];
        yield 'IUS before the modification time' => [$failed, ['if-unmodified-since' => [$before]]];
        yield 'IUS not a date is ignored' => [$proceed, ['if-unmodified-since' => ['nope']]];
        yield 'IM holding beats a stale IUS' => [$proceed, ['if-match' => ['"abc"'], 'if-unmodified-since' => [$before]]];
        // Order: If-Match before If-None-Match.
        yield 'IM failing before INM matching' => [$failed, ['if-match' => ['"x"'], 'if-none-match' => ['"abc"']]];
        yield 'IM holding then INM matching' => [$notModified, ['if-match' => ['"abc"'], 'if-none-match' => ['"abc"']]];
    }

    /** @param array<string, list<string>> $headers */
    #[DataProvider('cases')]
    public function testConditionalHeadersAreEvaluatedInTheRfcOrder(Precondition $expected, array $headers, string $method = 'GET'): void
    {
        $preconditions = new Preconditions(self::ETAG, self::MODIFIED);
        self::assertSame($expected, $preconditions->evaluate($method, $headers, self::NOW));
    }

    /** @return iterable<string, array{bool, list<string>, 2?: string}> holds, If-Range values, the file's tag */
    public static function ifRange(): iterable
    {
        yield 'absent' => [true, []];
        yield 'same strong tag' => [true, ['"abc"']];
        yield 'other tag' => [false, ['"xyz"']];
        yield 'weak tag never holds' => [false, ['W/"abc"']];
        yield 'weak file tag never holds' => [false, ['W/"abc"'], 'W/"abc"'];
        yield 'exact Last-Modified date' => [true, [HttpDate::format(self::MODIFIED)]];
        yield 'later date' => [false, [HttpDate::format(self::MODIFIED + 1)]];
        yield 'earlier date' => [false, [HttpDate::format(self::MODIFIED - 1)]];
        yield 'garbage' => [false, ['whenever']];
        yield 'two values' => [false, ['"abc"', '"abc"']];
        yield 'a list is not one tag' => [false, ['"abc", "x"']];
    }

    /** @param list<string> $values */
    #[DataProvider('ifRange')]
    public function testIfRangeHoldsOnlyForTheSameStrongValidator(bool $holds, array $values, string $etag = self::ETAG): void
    {
        $headers = $values === [] ? [] : ['if-range' => $values];
        self::assertSame($holds, (new Preconditions($etag, self::MODIFIED))->ifRangeHolds($headers));
    }

    /** @return iterable<string, array{?int, string}> */
    public static function dates(): iterable
    {
        yield 'IMF-fixdate' => [784111777, 'Sun, 06 Nov 1994 08:49:37 GMT'];
        yield 'RFC 850' => [784111777, 'Sunday, 06-Nov-94 08:49:37 GMT'];
        yield 'asctime' => [784111777, 'Sun Nov  6 08:49:37 1994'];
        yield 'surrounding spaces' => [784111777, ' Sun, 06 Nov 1994 08:49:37 GMT '];
        yield 'not GMT' => [null, 'Sun, 06 Nov 1994 08:49:37 PST'];
        yield 'lower-case month' => [null, 'Sun, 06 nov 1994 08:49:37 GMT'];
        yield 'February 30th' => [null, 'Sun, 30 Feb 1994 08:49:37 GMT'];
        yield 'hour 24' => [null, 'Sun, 06 Nov 1994 24:49:37 GMT'];
        yield 'free form' => [null, '1994-11-06T08:49:37Z'];
        yield 'relative' => [null, 'now'];
        yield 'empty' => [null, ''];
    }

    #[DataProvider('dates')]
    public function testOnlyTheThreeHttpDateFormsAreDates(?int $expected, string $value): void
    {
        self::assertSame($expected, HttpDate::parse($value));
    }

    public function testDatesAreSentInImfFixdate(): void
    {
        self::assertSame('Sun, 06 Nov 1994 08:49:37 GMT', HttpDate::format(784111777));
    }

    public function testEntityTagListsKeepWellFormedMembersOnly(): void
    {
        self::assertSame(['*'], EntityTags::parseList([' * ']));
        self::assertSame(['"a"', 'W/"b"', '"d"'], EntityTags::parseList(['"a", W/"b", junk, "d"']));
        self::assertSame([], EntityTags::parseList(['"unterminated']));
        self::assertSame(['""'], EntityTags::parseList(['""']));
        self::assertTrue(EntityTags::weakEquals('W/"a"', '"a"'));
        self::assertFalse(EntityTags::strongEquals('W/"a"', 'W/"a"'));
        self::assertTrue(EntityTags::strongEquals('"a"', '"a"'));
    }
}
