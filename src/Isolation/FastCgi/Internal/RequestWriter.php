<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi\Internal;

use Kiln\Isolation\FastCgi\FastCgiException;
use Kiln\Isolation\FastCgi\NameValuePairs;
use Kiln\Isolation\FastCgi\Record;
use Kiln\Isolation\FastCgi\RecordEncoder;
use Kiln\Isolation\FastCgi\RecordType;
use Kiln\Loop\Cancellation;

use function Kiln\Loop\read;

use Kiln\Loop\StreamException;

/**
 * Writes one request: BEGIN_REQUEST, the PARAMS stream, the STDIN stream. A string body goes out with the
 * rest in one write; a stream or an iterable is sent piece by piece as it is read, never held whole.
 *
 * @internal
 */
final class RequestWriter
{
    public const REQUEST_ID = 1;
    /** A multiple of 8 under 65535: full STDIN records need no padding. */
    private const PIECE = 65528;

    /**
     * The records that never change, spelled out (every request sends them; RequestWriterTest checks them
     * against RecordEncoder): BEGIN_REQUEST (RESPONDER, with and without FCGI_KEEP_CONN), the empty PARAMS and STDIN.
     */
    public const BEGIN_KEEP = "\x01\x01\x00\x01\x00\x08\x00\x00" . "\x00\x01\x01\x00\x00\x00\x00\x00";
    public const BEGIN = "\x01\x01\x00\x01\x00\x08\x00\x00" . "\x00\x01\x00\x00\x00\x00\x00\x00";
    public const PARAMS_END = "\x01\x04\x00\x01\x00\x00\x00\x00";
    public const STDIN_END = "\x01\x05\x00\x01\x00\x00\x00\x00";

    /** What ends a request without a body: the empty PARAMS and STDIN records, one after the other. */
    private const ENDS = self::PARAMS_END . self::STDIN_END;

    /** The zero bytes that pad a record's content to a multiple of 8, by their count. */
    private const PADDING = ['', "\0", "\0\0", "\0\0\0", "\0\0\0\0", "\0\0\0\0\0", "\0\0\0\0\0\0", "\0\0\0\0\0\0\0"];

    private function __construct() {}

    /**
     * @param array<string, string> $params
     * @param string|resource|iterable<string> $body
     *
     * @throws ConnectionLostException|FastCgiException|\Kiln\Loop\CancelledException
     */
    public static function send(Connection $connection, array $params, mixed $body, bool $keep, Deadline $deadline, ?Cancellation $cancellation): void
    {
        $pairs = NameValuePairs::encode($params);
        $begin = $keep ? self::BEGIN_KEEP : self::BEGIN;
        $length = \strlen($pairs);
        if ($length <= Record::MAX_CONTENT && $body === '') {
            // Nearly every request (a GET): BEGIN_REQUEST, one PARAMS record, the two empty records that end
            // PARAMS and STDIN, put together in one string (one allocation, the params copied once).
            $padding = -$length & 7;
            $header = \pack('nC', $length, $padding);
            $pad = self::PADDING[$padding];
            $ends = self::ENDS;
            $connection->write("{$begin}\x01\x04\x00\x01{$header}\x00{$pairs}{$pad}{$ends}", $deadline, $cancellation);

            return;
        }
        $head = $begin . ($length <= Record::MAX_CONTENT
            ? RecordEncoder::record(RecordType::Params->value, self::REQUEST_ID, $pairs) . self::PARAMS_END
            : RecordEncoder::stream(RecordType::Params, self::REQUEST_ID, $pairs, true));
        $end = self::STDIN_END;
        if (\is_string($body)) {
            $connection->write($body === '' ? $head . $end : $head . RecordEncoder::stream(RecordType::Stdin, self::REQUEST_ID, $body) . $end, $deadline, $cancellation);

            return;
        }
        $pending = $head;
        foreach (self::pieces($body, $cancellation) as $piece) {
            $connection->write($pending . RecordEncoder::stream(RecordType::Stdin, self::REQUEST_ID, $piece), $deadline, $cancellation);
            $pending = '';
        }
        $connection->write($pending . $end, $deadline, $cancellation);
    }

    /**
     * @param resource|iterable<string> $body
     *
     * @return \Generator<int, string>
     */
    private static function pieces(mixed $body, ?Cancellation $cancellation): \Generator
    {
        if (\is_iterable($body)) {
            foreach ($body as $piece) {
                if ($piece !== '') {
                    yield (string) $piece;
                }
            }

            return;
        }
        try {
            while (($piece = read($body, self::PIECE, $cancellation)) !== null) {
                yield $piece;
            }
        } catch (StreamException $e) {
            throw new FastCgiException('Reading the request body failed: ' . $e->getMessage(), 0, $e);
        }
    }
}
