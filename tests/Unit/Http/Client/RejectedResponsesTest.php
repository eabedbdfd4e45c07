<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Client;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** Malformed responses: each must end in a ClientException whose message names the problem, whole and byte by byte. */
final class RejectedResponsesTest extends TestCase
{
    private const OK = "HTTP/1.1 200 OK\r\n";

    private const CHUNKED = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";

    /** @return iterable<string, array{0: string, 1: string, 2?: string, 3?: int}> */
    public static function rejected(): iterable
    {
        yield 'empty response' => ['', 'closed the connection before the end of the response head'];
        yield 'truncated head' => [self::OK . 'Content-Le', 'before the end of the response head'];
        yield 'not HTTP' => ["SSH-2.0-OpenSSH\r\n\r\n", 'Malformed status line'];
        yield 'HTTP/2 status line' => ["HTTP/2 200\r\n\r\n", 'Malformed status line'];
        yield 'lower-case protocol' => ["http/1.1 200 OK\r\n\r\n", 'Malformed status line'];
        yield 'two-digit status' => ["HTTP/1.1 20 OK\r\n\r\n", 'Malformed status line'];
        yield 'status over 599' => ["HTTP/1.1 600 Odd\r\n\r\n", 'Invalid status code'];
        yield 'status 099' => ["HTTP/1.1 099 Odd\r\n\r\n", 'Invalid status code'];
        yield 'double space in status line' => ["HTTP/1.1  200 OK\r\n\r\n", 'Malformed status line'];
        yield 'control byte in reason' => ["HTTP/1.1 200 O\x01K\r\n\r\n", 'reason phrase'];
        yield 'bare LF line endings' => ["HTTP/1.1 200 OK\nContent-Length: 0\n\n", 'Bare LF'];
        yield 'bare LF in one header line' => [self::OK . "A: 1\nB: 2\r\n\r\n", 'Bare LF'];
        yield 'bare CR in a value' => [self::OK . "A: 1\r2\r\n\r\n", 'Control character'];
        yield 'NUL in a value' => [self::OK . "A: 1\x002\r\n\r\n", 'Control character'];
        yield 'obs-fold' => [self::OK . "A: 1\r\n 2\r\n\r\n", 'line folding'];
        yield 'no colon' => [self::OK . "NoColon\r\n\r\n", 'Malformed header field'];
        yield 'space before colon' => [self::OK . "Content-Length : 0\r\n\r\n", 'Malformed header field'];
        yield 'empty name' => [self::OK . ": value\r\n\r\n", 'Malformed header field'];
        yield 'head over the limit' => [self::OK . 'X: ' . \str_repeat('a', 200) . "\r\n\r\n", 'larger than 128 bytes', 'GET', 128];
        yield 'head without end over the limit' => [self::OK . 'X: ' . \str_repeat('a', 200), 'larger than 128 bytes', 'GET', 128];
        yield 'too many fields' => [self::OK . \str_repeat("A: 1\r\n", 101) . "\r\n", 'Too many header fields'];
        yield 'switching protocols' => ["HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", '101'];
        yield 'CL and TE' => [self::OK . "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 'Both Transfer-Encoding and Content-Length'];
        yield 'TE gzip' => [self::OK . "Transfer-Encoding: gzip\r\n\r\n", 'Unsupported Transfer-Encoding'];
        yield 'TE gzip, chunked' => [self::OK . "Transfer-Encoding: gzip, chunked\r\n\r\n", 'Unsupported Transfer-Encoding'];
        yield 'TE chunked twice' => [self::OK . "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 'Unsupported Transfer-Encoding'];
        yield 'TE on HTTP/1.0' => ["HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 'HTTP/1.0'];
        yield 'CL negative' => [self::OK . "Content-Length: -1\r\n\r\n", 'Invalid Content-Length'];
        yield 'CL plus' => [self::OK . "Content-Length: +1\r\n\r\nx", 'Invalid Content-Length'];
        yield 'CL hex' => [self::OK . "Content-Length: 0x1\r\n\r\nx", 'Invalid Content-Length'];
        yield 'CL empty' => [self::OK . "Content-Length: \r\n\r\n", 'Invalid Content-Length'];
        yield 'CL 19 digits' => [self::OK . "Content-Length: 1000000000000000000\r\n\r\n", 'Invalid Content-Length'];
        yield 'CL conflicting' => [self::OK . "Content-Length: 1\r\nContent-Length: 2\r\n\r\nxx", 'Conflicting Content-Length'];
        yield 'CL list conflicting' => [self::OK . "Content-Length: 1, 2\r\n\r\nxx", 'Conflicting Content-Length'];
        yield 'body shorter than CL' => [self::OK . "Content-Length: 10\r\n\r\nshort", 'before the end of the body'];
        yield 'chunk size not hex' => [self::CHUNKED . "xyz\r\n", 'Malformed chunk size'];
        yield 'chunk size empty' => [self::CHUNKED . "\r\n", 'Malformed chunk size'];
        yield 'chunk size negative' => [self::CHUNKED . "-5\r\nhello\r\n0\r\n\r\n", 'Malformed chunk size'];
        yield 'chunk size 0x prefix' => [self::CHUNKED . "0x5\r\nhello\r\n0\r\n\r\n", 'Malformed chunk size'];
        yield 'chunk size overflow' => [self::CHUNKED . "ffffffffffffffff\r\n", 'Malformed chunk size'];
        yield 'chunk size line with bare LF' => [self::CHUNKED . "5\nhello\r\n0\r\n\r\n", 'Bare LF'];
        yield 'chunk size line too long' => [self::CHUNKED . '5;' . \str_repeat('x', 5000) . "\r\n", 'Chunk size line too long'];
        yield 'control byte in chunk extension' => [self::CHUNKED . "5;a\x01b\r\nhello\r\n0\r\n\r\n", 'Malformed chunk size'];
        yield 'chunk data longer than its size' => [self::CHUNKED . "3\r\nhello\r\n0\r\n\r\n", 'not followed by CRLF'];
        yield 'chunk data with LF only after it' => [self::CHUNKED . "5\r\nhello\n0\r\n\r\n", 'not followed by CRLF'];
        yield 'truncated chunk' => [self::CHUNKED . "5\r\nhel", 'before the end of a chunk'];
        yield 'missing last chunk' => [self::CHUNKED . "5\r\nhello\r\n", 'before the end of a chunk size'];
        yield 'truncated trailers' => [self::CHUNKED . "0\r\nX-A: 1\r\n", 'before the end of the trailer section'];
        yield 'malformed trailer' => [self::CHUNKED . "0\r\nnot a field\r\n\r\n", 'Malformed header field'];
    }

    #[DataProvider('rejected')]
    public function testMalformedResponseIsRejectedWithAClearMessage(string $input, string $message, string $method = 'GET', int $maxHeaderBytes = 65536): void
    {
        ParserHarness::assertRejected($input, $message, $method, $maxHeaderBytes);
    }
}
