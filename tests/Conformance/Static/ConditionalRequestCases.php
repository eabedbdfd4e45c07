<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

/** 304, 412 and If-Range on the wire (RFC 9110 §13). */
abstract class ConditionalRequestCases extends StaticTestCase
{
    public function testAMatchingIfNoneMatchIs304WithValidatorsAndNoBody(): void
    {
        $etag = (string) self::header(self::get('/hello.txt'), 'ETag');
        foreach ([$etag, "\"nope\", $etag", "W/$etag", '*'] as $value) {
            $response = self::get('/hello.txt', ['If-None-Match' => $value]);
            self::assertSame(304, $response['status'], $value);
            self::assertSame($etag, self::header($response, 'ETag'));
            self::assertNotNull(self::header($response, 'Last-Modified'));
            self::assertNull(self::header($response, 'Content-Length'));
            self::assertSame('', $response['body']);
            self::assertStringEndsWith("\r\n\r\n", $response['raw']);
        }
        self::assertSame(200, self::get('/hello.txt', ['If-None-Match' => '"other"'])['status']);
        self::assertSame(304, self::request('HEAD', '/hello.txt', ['If-None-Match' => $etag])['status']);
    }

    public function testIfModifiedSinceIs304UnlessTheFileIsNewer(): void
    {
        $modified = (int) filemtime(self::site()->path('hello.txt'));
        $date = static fn(int $t): string => gmdate('D, d M Y H:i:s', $t) . ' GMT';
        self::assertSame(304, self::get('/hello.txt', ['If-Modified-Since' => $date($modified)])['status']);
        self::assertSame(304, self::get('/hello.txt', ['If-Modified-Since' => $date($modified + 1)])['status']);
        self::assertSame(200, self::get('/hello.txt', ['If-Modified-Since' => $date($modified - 1)])['status']);
        self::assertSame(200, self::get('/hello.txt', ['If-Modified-Since' => 'not a date'])['status']);
    }

    public function testIfNoneMatchWinsOverIfModifiedSince(): void
    {
        $modified = (int) filemtime(self::site()->path('hello.txt'));
        $fresh = gmdate('D, d M Y H:i:s', $modified + 1) . ' GMT';
        $response = self::get('/hello.txt', ['If-None-Match' => '"stale"', 'If-Modified-Since' => $fresh]);
        self::assertSame(200, $response['status']);
        self::assertSame("Hello, world!\n", $response['body']);
    }

    public function testFailedIfMatchOrIfUnmodifiedSinceIs412(): void
    {
        $etag = (string) self::header(self::get('/hello.txt'), 'ETag');
        $modified = (int) filemtime(self::site()->path('hello.txt'));
        self::assertSame(412, self::get('/hello.txt', ['If-Match' => '"other"'])['status']);
        self::assertSame(412, self::get('/hello.txt', ['If-Match' => "W/$etag"])['status'], 'If-Match compares strongly');
        self::assertSame(200, self::get('/hello.txt', ['If-Match' => $etag])['status']);
        self::assertSame(200, self::get('/hello.txt', ['If-Match' => '*'])['status']);
        $before = gmdate('D, d M Y H:i:s', $modified - 10) . ' GMT';
        self::assertSame(412, self::get('/hello.txt', ['If-Unmodified-Since' => $before])['status']);
        self::assertSame(200, self::get('/hello.txt', ['If-Unmodified-Since' => gmdate('D, d M Y H:i:s', $modified) . ' GMT'])['status']);
    }

    public function testAPreconditionFailureBeatsARange(): void
    {
        self::assertSame(412, self::get('/data.bin', ['If-Match' => '"x"', 'Range' => 'bytes=0-9'])['status']);
        $etag = (string) self::header(self::get('/data.bin'), 'ETag');
        self::assertSame(304, self::get('/data.bin', ['If-None-Match' => $etag, 'Range' => 'bytes=0-9'])['status']);
    }

    public function testIfRangeWithTheCurrentTagOrDateHonoursTheRange(): void
    {
        $full = self::get('/data.bin');
        $etag = (string) self::header($full, 'ETag');
        $date = (string) self::header($full, 'Last-Modified');
        foreach ([$etag, $date] as $validator) {
            $response = self::get('/data.bin', ['Range' => 'bytes=10-19', 'If-Range' => $validator]);
            self::assertSame(206, $response['status'], $validator);
            self::assertSame(substr($full['body'], 10, 10), $response['body']);
        }
    }

    public function testIfRangeWithAStaleOrWeakValidatorSendsTheWholeFile(): void
    {
        $full = self::get('/data.bin');
        $etag = (string) self::header($full, 'ETag');
        $stale = gmdate('D, d M Y H:i:s', (int) filemtime(self::site()->path('data.bin')) - 60) . ' GMT';
        foreach (['"stale"', "W/$etag", $stale, 'garbage'] as $validator) {
            $response = self::get('/data.bin', ['Range' => 'bytes=10-19', 'If-Range' => $validator]);
            self::assertSame(200, $response['status'], $validator);
            self::assertSame($full['body'], $response['body']);
        }
    }

    public function testAChangedFileGetsANewTagAndTheOldOneNoLongerMatches(): void
    {
        $site = self::site();
        $site->put('changing.txt', 'version one', time() - 100);
        $old = (string) self::header(self::get('/changing.txt'), 'ETag');
        $site->put('changing.txt', 'version two!', time());
        $response = self::get('/changing.txt', ['If-None-Match' => $old]);
        self::assertSame(200, $response['status']);
        self::assertSame('version two!', $response['body']);
        self::assertNotSame($old, self::header($response, 'ETag'));
        $range = self::get('/changing.txt', ['Range' => 'bytes=0-6', 'If-Range' => $old]);
        self::assertSame(200, $range['status'], 'a resumed download of the old file must not splice in new bytes');
    }
}
