<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Isolation\FastCgi\Internal;

use Kiln\Isolation\FastCgi\Internal\Connection;
use Kiln\Isolation\FastCgi\Internal\Deadline;
use Kiln\Isolation\FastCgi\Internal\RequestWriter;
use Kiln\Isolation\FastCgi\NameValuePairs;
use Kiln\Isolation\FastCgi\RecordDecoder;
use Kiln\Isolation\FastCgi\RecordEncoder;
use Kiln\Isolation\FastCgi\RecordType;
use Kiln\Isolation\FastCgi\Role;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class RequestWriterTest extends TestCase
{
    public function testTheRecordsSpelledOutAreWhatTheEncoderMakes(): void
    {
        self::assertSame(RecordEncoder::beginRequest(RequestWriter::REQUEST_ID, Role::Responder, true), RequestWriter::BEGIN_KEEP);
        self::assertSame(RecordEncoder::beginRequest(RequestWriter::REQUEST_ID, Role::Responder, false), RequestWriter::BEGIN);
        self::assertSame(RecordEncoder::record(RecordType::Params->value, RequestWriter::REQUEST_ID), RequestWriter::PARAMS_END);
        self::assertSame(RecordEncoder::record(RecordType::Stdin->value, RequestWriter::REQUEST_ID), RequestWriter::STDIN_END);
    }

    /** A request without a body is put together in one piece: byte for byte what the encoder makes, whatever its padding. */
    public function testARequestWithoutABodyIsTheEncodersRecordsForEveryPadding(): void
    {
        Loop::set(new SelectDriver());
        foreach ([true, false] as $keep) {
            for ($extra = 0; $extra < 8; $extra++) {
                $params = ['SCRIPT_FILENAME' => '/srv/www/index.php', 'QUERY_STRING' => \str_repeat('q', $extra)];
                $pairs = NameValuePairs::encode($params);
                $expected = RecordEncoder::beginRequest(RequestWriter::REQUEST_ID, Role::Responder, $keep)
                    . RecordEncoder::record(RecordType::Params->value, RequestWriter::REQUEST_ID, $pairs)
                    . RequestWriter::PARAMS_END . RequestWriter::STDIN_END;
                $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
                self::assertNotFalse($pair);
                \stream_set_blocking($pair[0], false);
                $connection = new Connection($pair[0], 'test');
                RequestWriter::send($connection, $params, '', $keep, new Deadline('test', 5.0, null), null);
                self::assertSame($expected, \fread($pair[1], \strlen($expected) + 1), "keep: $keep, padding of " . \strlen($pairs) . ' bytes');
                $connection->close();
                \fclose($pair[1]);
            }
        }
    }

    /** @return iterable<string, array{array<string, string>, string}> */
    public static function requests(): iterable
    {
        yield 'small params, no body' => [['SCRIPT_FILENAME' => '/a.php', 'QUERY_STRING' => ''], ''];
        yield 'params over one record, a body' => [['HTTP_COOKIE' => \str_repeat('c', 70_000), 'REQUEST_METHOD' => 'POST'], 'body'];
    }

    /** @param array<string, string> $params */
    #[DataProvider('requests')]
    public function testARequestDecodesBackToItsParamsAndBody(array $params, string $body): void
    {
        Loop::set(new SelectDriver());
        $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        self::assertNotFalse($pair);
        \stream_set_blocking($pair[0], false);
        $connection = new Connection($pair[0], 'test');
        $bytes = '';
        $reader = Loop::onReadable($pair[1], static function () use ($pair, &$bytes): void {
            $bytes .= (string) \fread($pair[1], 1 << 16);
        });
        Loop::unreference($reader); // the loop runs while the request is written, or for one delay
        RequestWriter::send($connection, $params, $body, true, new Deadline('test', 5.0, null), null);
        $decoder = new RecordDecoder();
        $records = [];
        $deadline = \hrtime(true) + 5_000_000_000;
        while (!\in_array([RecordType::Stdin->value, ''], $records, true) && \hrtime(true) < $deadline) {
            Loop::delay(0.001, static function (): void {});
            Loop::run();
            $decoder->feed($bytes);
            $bytes = '';
            while (($record = $decoder->next()) !== null) {
                $records[] = [$record->type, $record->content];
            }
        }
        Loop::cancel($reader);
        $stream = static fn(RecordType $type): string => \implode('', \array_map(
            static fn(array $record): string => $record[1],
            \array_filter($records, static fn(array $record): bool => $record[0] === $type->value),
        ));
        self::assertSame(RecordType::BeginRequest->value, $records[0][0]);
        self::assertSame($params, NameValuePairs::decode($stream(RecordType::Params)));
        self::assertSame($body, $stream(RecordType::Stdin));
        $connection->close();
        \fclose($pair[1]);
    }
}
