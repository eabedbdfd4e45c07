<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Static;

use Kiln\Http\Static\AcceptEncoding;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** Which of br, gzip and identity a client gets, for the Accept-Encoding it sends (RFC 9110 §12.5.3). */
final class AcceptEncodingTest extends TestCase
{
    private const ALL = ['br', 'gzip', 'identity'];

    /** @return iterable<string, array{?string, list<string>, 2?: list<string>}> chosen, header lines, on offer */
    public static function choices(): iterable
    {
        yield 'no header: identity' => ['identity', []];
        yield 'empty header: identity' => ['identity', ['']];
        yield 'browser list: br first by server preference' => ['br', ['gzip, deflate, br, zstd']];
        yield 'gzip only' => ['gzip', ['gzip']];
        yield 'x-gzip is gzip' => ['gzip', ['x-gzip']];
        yield 'upper case' => ['gzip', ['GZIP']];
        yield 'q-values pick gzip over br' => ['gzip', ['br;q=0.5, gzip;q=0.8']];
        yield 'q with spaces' => ['gzip', ['br ; q=0.5 , gzip ; q=0.9']];
        yield 'br refused' => ['gzip', ['br;q=0, gzip']];
        yield 'all refused but identity implied' => ['identity', ['br;q=0, gzip;q=0']];
        yield 'star accepts everything' => ['br', ['*']];
        yield 'star with named refusal' => ['gzip', ['*, br;q=0']];
        yield 'star refused, gzip named' => ['gzip', ['gzip, *;q=0']];
        yield 'star refused and nothing named: nothing acceptable' => [null, ['*;q=0']];
        yield 'identity refused, gzip fine' => ['gzip', ['gzip, identity;q=0']];
        yield 'identity refused and nothing else on offer' => [null, ['identity;q=0'], ['identity']];
        yield 'identity preferred explicitly' => ['identity', ['identity, gzip;q=0.5']];
        yield 'implied identity ranks below any named coding' => ['gzip', ['gzip;q=0.001']];
        yield 'malformed weight drops the member' => ['gzip', ['br;q=2, gzip']];
        yield 'weight with four decimals is malformed' => ['gzip', ['br;q=0.5000, gzip;q=0.4']];
        yield 'unknown parameter ignored' => ['br', ['br;level=5']];
        yield 'two header lines' => ['br', ['gzip', 'br']];
        yield 'empty members' => ['gzip', [', , gzip ,']];
        yield 'only gzip on offer' => ['gzip', ['br, gzip'], ['gzip', 'identity']];
        yield 'only identity on offer' => ['identity', ['br, gzip'], ['identity']];
        yield 'duplicate member: the best weight counts' => ['br', ['br;q=0.1, gzip;q=0.5, br;q=0.9']];
    }

    /**
     * @param list<string> $values
     * @param list<string> $offer
     */
    #[DataProvider('choices')]
    public function testTheMostWantedAvailableCodingIsChosen(?string $expected, array $values, array $offer = self::ALL): void
    {
        self::assertSame($expected, AcceptEncoding::parse($values)->choose($offer));
    }

    public function testQualitiesAreReported(): void
    {
        $accept = AcceptEncoding::parse(['gzip;q=0.7, identity;q=0']);
        self::assertSame(0.7, $accept->quality('gzip'));
        self::assertSame(0.0, $accept->quality('br'));
        self::assertFalse($accept->accepts('identity'));
        self::assertTrue(AcceptEncoding::parse([])->accepts('identity'));
        self::assertFalse(AcceptEncoding::parse([])->accepts('gzip'));
    }
}
