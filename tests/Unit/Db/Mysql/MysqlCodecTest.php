<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Db\Mysql;

use Kiln\Db\Mysql\Event\Done;
use Kiln\Db\Mysql\Event\Ready;
use Kiln\Db\Mysql\Event\Row;
use Kiln\Db\Mysql\Event\ServerError;
use Kiln\Db\Mysql\MysqlCodec;
use Kiln\Db\Mysql\MysqlProtocolException;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** MysqlCodec on packets built by hand: what no recording from MariaDB shows (its auth plugins, huge packets, bad input). */
final class MysqlCodecTest extends TestCase
{
    private const NONCE = 'abcdefghijklmnopqrst';
    private const OK = "\x00\x00\x00\x02\x00\x00\x00";

    /** @return iterable<string, array{bool}> */
    public static function feeds(): iterable
    {
        yield 'whole' => [false];
        yield 'byte by byte' => [true];
    }

    #[DataProvider('feeds')]
    public function testCachingSha2FastAuthenticationNeedsNoPassword(bool $byteByByte): void
    {
        $codec = new MysqlCodec('u', 'pw', 'db');
        $events = self::feed($codec, self::packet(0, self::greeting('caching_sha2_password')), $byteByByte);
        self::assertSame([], $events);
        $response = $codec->output();
        self::assertStringContainsString("caching_sha2_password\0", $response);
        self::assertStringNotContainsString('pw', substr($response, 36));
        $events = self::feed($codec, self::packet(2, "\x01\x03") . self::packet(3, self::OK), $byteByByte);
        self::assertInstanceOf(Ready::class, $events[0] ?? null);
        self::assertSame('', $codec->output());
    }

    public function testCachingSha2FullAuthenticationSendsThePasswordOnlyOverASecureChannel(): void
    {
        $secure = new MysqlCodec('u', 'pw', 'db', secure: true);
        self::feed($secure, self::packet(0, self::greeting('caching_sha2_password')), false);
        $secure->output();
        self::feed($secure, self::packet(2, "\x01\x04"), false);
        self::assertSame(self::packet(3, "pw\0"), $secure->output());

        $tcp = new MysqlCodec('u', 'pw', 'db');
        self::feed($tcp, self::packet(0, self::greeting('caching_sha2_password')), false);
        $tcp->output();
        $this->expectException(MysqlProtocolException::class);
        $this->expectExceptionMessage('connect over a unix socket or TLS');
        self::feed($tcp, self::packet(2, "\x01\x04"), false);
    }

    public function testAnAuthSwitchIsAnsweredWithTheNewPluginsProof(): void
    {
        $codec = new MysqlCodec('u', 'pw', '');
        self::feed($codec, self::packet(0, self::greeting('caching_sha2_password')), false);
        $codec->output();
        $nonce = 'ABCDEFGHIJKLMNOPQRST';
        self::feed($codec, self::packet(2, "\xFEmysql_native_password\0$nonce\0"), false);
        $hash = sha1('pw', true);
        self::assertSame(self::packet(3, $hash ^ sha1($nonce . sha1($hash, true), true)), $codec->output());
        self::assertInstanceOf(Ready::class, self::feed($codec, self::packet(4, self::OK), false)[0] ?? null);
    }

    public function testALoginRefusedIsAServerErrorWithItsSqlstate(): void
    {
        $codec = new MysqlCodec('u', 'wrong', 'db');
        self::feed($codec, self::packet(0, self::greeting('mysql_native_password')), false);
        $events = self::feed($codec, self::packet(2, "\xFF\x15\x04#28000Access denied for user 'u'@'localhost' (using password: YES)"), false);
        $error = $events[0] ?? null;
        self::assertInstanceOf(ServerError::class, $error);
        self::assertSame([1045, '28000'], [$error->code, $error->sqlState]);
        self::assertFalse($codec->isReady());
    }

    #[DataProvider('feeds')]
    public function testAPayloadOfSixteenMebibytesOrMoreArrivesInPartsAndIsJoined(bool $byteByByte): void
    {
        $codec = $this->readyCodec();
        $codec->query('SELECT big');
        $value = str_repeat('z', 0xFFFFFF + 10);
        $row = "\xFE" . pack('P', \strlen($value)) . $value;
        $server = self::packet(1, "\x01") . self::packet(2, self::column('big', 0xFC)) . self::packet(3, "\xFE\x00\x00\x22\x00")
            . self::packet(4, substr($row, 0, 0xFFFFFF)) . self::packet(5, substr($row, 0xFFFFFF)) . self::packet(6, "\xFE\x00\x00\x02\x00");
        $events = $byteByByte ? self::feedInSlices($codec, $server, 4093) : self::feed($codec, $server, false);
        $rows = array_values(array_filter($events, static fn($e) => $e instanceof Row));
        self::assertCount(1, $rows);
        self::assertSame($value, $rows[0]->values['big'] ?? null);
        self::assertInstanceOf(Done::class, end($events));
        self::assertTrue($codec->isReady());
    }

    /** @return iterable<string, array{string, string}> server bytes after a COM_QUERY, the message expected */
    public static function rejected(): iterable
    {
        yield 'a packet out of sequence' => [self::packet(2, self::OK), 'sequence id 2, expected 1'];
        yield 'a request for a local file' => [self::packet(1, "\xFBpasswd"), 'local file'];
        yield 'a row shorter than its columns' => [self::packet(1, "\x01") . self::packet(2, self::column('a', 0xFD)) . self::packet(3, "\xFE\x00\x00\x02\x00") . self::packet(4, "\x05ab"), 'ends before its fields'];
        yield 'an empty packet' => [self::packet(1, ''), 'empty packet'];
        yield 'a length that is 0xFF' => [self::packet(1, "\x01") . self::packet(2, "\xFF"), 'ends before'];
    }

    #[DataProvider('rejected')]
    public function testMalformedAnswersAreRejected(string $server, string $message): void
    {
        $codec = $this->readyCodec();
        $codec->query('SELECT 1');
        $this->expectException(MysqlProtocolException::class);
        $this->expectExceptionMessage($message);
        self::feed($codec, $server, false);
    }

    public function testACommandBeforeThePreviousOneFinishedIsAnError(): void
    {
        $codec = $this->readyCodec();
        $codec->query('SELECT SLEEP(1)');
        $this->expectException(\Error::class);
        $codec->query('SELECT 2');
    }

    public function testTheErrorAServerSentBeforeClosingIsReadWhateverItsSequenceId(): void
    {
        $error = MysqlCodec::parting(self::packet(0, "\xFF\x81\x04#08S01Got a packet bigger than 'max_allowed_packet' bytes"));
        self::assertInstanceOf(ServerError::class, $error);
        self::assertSame([1153, '08S01', "Got a packet bigger than 'max_allowed_packet' bytes"], [$error->code, $error->sqlState, $error->message]);
        self::assertNull(MysqlCodec::parting(self::packet(5, self::OK)), 'an OK is no parting error');
        self::assertNull(MysqlCodec::parting("\x3C\x00"), 'too short to tell');
        self::assertNull(MysqlCodec::parting(self::packet(1, "\xFF\x81")), 'a cut error packet');
        self::assertNull(MysqlCodec::parting(self::packet(1, '')), 'an empty packet');
    }

    public function testAQueryIsFramedWithSequenceIdZero(): void
    {
        $codec = $this->readyCodec();
        $codec->query('SELECT 1');
        self::assertSame("\x09\x00\x00\x00\x03SELECT 1", $codec->output());
    }

    private function readyCodec(): MysqlCodec
    {
        $codec = new MysqlCodec('u', '', 'db');
        self::feed($codec, self::packet(0, self::greeting('mysql_native_password')) . self::packet(2, self::OK), false);
        $codec->output();
        self::assertTrue($codec->isReady());

        return $codec;
    }

    /** @return list<object> */
    private static function feed(MysqlCodec $codec, string $bytes, bool $byteByByte): array
    {
        return self::feedInSlices($codec, $bytes, $byteByByte ? 1 : max(1, \strlen($bytes)));
    }

    /** @return list<object> */
    private static function feedInSlices(MysqlCodec $codec, string $bytes, int $size): array
    {
        $events = [];
        for ($offset = 0; $offset < \strlen($bytes); $offset += $size) {
            $codec->feed(substr($bytes, $offset, $size));
            while (($event = $codec->next()) !== null) {
                $events[] = $event;
            }
        }

        return $events;
    }

    private static function packet(int $sequence, string $payload): string
    {
        return substr(pack('V', \strlen($payload)), 0, 3) . \chr($sequence) . $payload;
    }

    private static function greeting(string $plugin): string
    {
        $capabilities = 0x200 | 0x8000 | 0x80000 | 0x200000 | 0x10000 | 0x20000;

        return "\x0A8.0.36\0" . pack('V', 7) . substr(self::NONCE, 0, 8) . "\0" . pack('v', $capabilities & 0xFFFF)
            . "\x2D" . pack('v', 2) . pack('v', $capabilities >> 16) . \chr(21) . str_repeat("\0", 10)
            . substr(self::NONCE, 8) . "\0" . $plugin . "\0";
    }

    private static function column(string $name, int $type): string
    {
        $lenenc = static fn(string $s): string => \chr(\strlen($s)) . $s;

        return $lenenc('def') . $lenenc('') . $lenenc('') . $lenenc('') . $lenenc($name) . $lenenc('')
            . "\x0C" . pack('v', 45) . pack('V', 255) . \chr($type) . pack('v', 0) . "\x00\x00\x00";
    }
}
