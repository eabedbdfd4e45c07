<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Wire;

use Kiln\Http\Limits;
use Kiln\Http\Wire\BodyChunk;
use Kiln\Http\Wire\HeadCache;
use Kiln\Http\Wire\MessageEnd;
use Kiln\Http\Wire\ParseException;
use Kiln\Http\Wire\RequestHead;
use Kiln\Http\Wire\RequestParser;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class HeadCacheTest extends TestCase
{
    private const GET = "GET /a?b=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n";

    public function testTheSameBytesGiveTheSameHeadAsAFreshParse(): void
    {
        $limits = new Limits();
        $cache = new HeadCache($limits);
        $first = self::heads(new RequestParser($limits, $cache), [self::GET]);
        $again = self::heads(new RequestParser($limits, $cache), [self::GET]);
        $fresh = self::heads(new RequestParser(new Limits()), [self::GET]);
        self::assertCount(1, $again);
        self::assertSame($first[0], $again[0], 'the second parse is the cached head');
        self::assertEquals($fresh[0], $again[0], 'a cached head equals what parsing the bytes gives');
        self::assertSame(1, $cache->count());
    }

    public function testACachedHeadIsFoundWhateverTheSplitAndAfterEmptyLines(): void
    {
        $limits = new Limits();
        $cache = new HeadCache($limits);
        $known = self::heads(new RequestParser($limits, $cache), [self::GET])[0];
        self::assertSame([$known], self::heads(new RequestParser($limits, $cache), str_split(self::GET)));
        self::assertSame([$known], self::heads(new RequestParser($limits, $cache), ["\r\n\r\n" . self::GET]));
        self::assertSame([$known, $known, $known], self::heads(new RequestParser($limits, $cache), [str_repeat(self::GET, 3)]));
    }

    /**
     * A cached head that arrives in pieces is taken from the cache once whole, after the scanner had begun on it: the
     * next head on the connection is scanned from its own start, so a bad byte in it is still refused, wherever it is.
     */
    public function testAHeadAfterACachedHeadThatArrivedInPiecesIsScannedWhole(): void
    {
        $limits = new Limits();
        $cache = new HeadCache($limits);
        self::heads(new RequestParser($limits, $cache), [self::GET]);
        $bad = "GET /c HTTP/1.1\r\nHost: a\x01b\r\nAccept: */*\r\n\r\n";
        foreach ([3, 30, 45] as $split) {
            $parser = new RequestParser($limits, $cache);
            self::assertCount(2, self::heads($parser, [substr(self::GET, 0, $split), substr(self::GET, $split), self::GET]));
            try {
                self::heads($parser, [$bad]);
                self::fail("split at $split: a control byte in a header value was taken");
            } catch (ParseException $error) {
                self::assertSame(400, $error->status, "split at $split");
            }
        }
    }

    public function testEmptyLinesBeforeACachedHeadAreStillCounted(): void
    {
        $limits = new Limits();
        $cache = new HeadCache($limits);
        self::heads(new RequestParser($limits, $cache), [self::GET]);
        $parser = new RequestParser($limits, $cache);
        $parser->feed(str_repeat("\r\n", RequestParser::MAX_EMPTY_LINES + 1) . self::GET);
        $this->expectExceptionObject(new ParseException(400, 'Too many empty lines before the request line'));
        $parser->next();
    }

    public function testOneByteMoreOrLessIsAnotherHead(): void
    {
        $limits = new Limits();
        $cache = new HeadCache($limits);
        $a = self::heads(new RequestParser($limits, $cache), [self::GET])[0];
        $b = self::heads(new RequestParser($limits, $cache), [str_replace('b=1', 'b=2', self::GET)])[0];
        self::assertSame('b=1', $a->query);
        self::assertSame('b=2', $b->query);
        self::assertSame(2, $cache->count());
    }

    public function testAHeadWithABodyIsNeverCachedAndItsBodyIsStillFramed(): void
    {
        $limits = new Limits();
        $cache = new HeadCache($limits);
        $post = "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello";
        foreach ([1, 2] as $round) {
            $parser = new RequestParser($limits, $cache);
            $parser->feed($post . $post);
            $items = [];
            while (($item = $parser->next()) !== null) {
                $items[] = $item instanceof BodyChunk ? $item->data : $item::class;
            }
            self::assertSame([RequestHead::class, 'hello', MessageEnd::class, RequestHead::class, 'hello', MessageEnd::class], $items, "round $round");
        }
        self::assertSame(0, $cache->count());
    }

    /** @return iterable<string, array{0: int, 1: string, 2?: Limits}> */
    public static function rejected(): iterable
    {
        yield from RejectedRequestsTest::rejected();
    }

    #[DataProvider('rejected')]
    public function testARefusedHeadIsRefusedAgainByParsersSharingACache(int $status, string $input, ?Limits $limits = null): void
    {
        $limits ??= new Limits();
        $cache = new HeadCache($limits);
        foreach (['whole' => [$input], 'again' => [$input], 'byte by byte' => $input === '' ? [] : str_split($input)] as $how => $feeds) {
            $parser = new RequestParser($limits, $cache);
            try {
                self::heads($parser, $feeds);
                self::fail("$how: not refused");
            } catch (ParseException $error) {
                self::assertSame($status, $error->status, $how);
            }
        }
    }

    public function testTheCacheKeepsAtMostItsCapacityAndDropsTheOldest(): void
    {
        $limits = new Limits();
        $cache = new HeadCache($limits, 2);
        $heads = [];
        foreach (['/1', '/2', '/3'] as $path) {
            $heads[$path] = self::heads(new RequestParser($limits, $cache), ["GET $path HTTP/1.1\r\nHost: a\r\n\r\n"])[0];
        }
        self::assertSame(2, $cache->count());
        self::assertNull($cache->get("GET /1 HTTP/1.1\r\nHost: a\r\n\r\n"));
        self::assertSame($heads['/3'], $cache->get("GET /3 HTTP/1.1\r\nHost: a\r\n\r\n"));
    }

    public function testALongHeadIsParsedButNotKept(): void
    {
        $limits = new Limits();
        $cache = new HeadCache($limits);
        $long = "GET / HTTP/1.1\r\nHost: a\r\nX-Long: " . str_repeat('x', HeadCache::MAX_KEY) . "\r\n\r\n";
        self::assertSame('/', self::heads(new RequestParser($limits, $cache), [$long])[0]->path);
        self::assertSame(0, $cache->count());
    }

    public function testACacheServesOnlyParsersWithItsOwnLimits(): void
    {
        $cache = new HeadCache(new Limits());
        $this->expectException(\Error::class);
        new RequestParser(new Limits(requestLine: 16), $cache);
    }

    public function testACacheHoldsAtLeastOneHead(): void
    {
        $this->expectException(\ValueError::class);
        new HeadCache(new Limits(), 0);
    }

    /**
     * @param list<string> $feeds
     * @return list<RequestHead>
     */
    private static function heads(RequestParser $parser, array $feeds): array
    {
        $heads = [];
        foreach ($feeds as $bytes) {
            $parser->feed($bytes);
            while (($item = $parser->next()) !== null) {
                if ($item instanceof RequestHead) {
                    $heads[] = $item;
                }
            }
        }
        return $heads;
    }
}
