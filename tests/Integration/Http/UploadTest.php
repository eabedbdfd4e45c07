<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Http;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/** A multipart upload through a real server: fields and files arrive intact, temp files are gone after. */
final class UploadTest extends TestCase
{
    private static ?KilnProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$server = KilnProcess::start(\dirname(__DIR__, 2) . '/Fixtures/upload/app.php', ['--workers=1']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    public function testAFiveMebibyteUploadWithFieldsArrivesIntactAndLeavesNoTempFiles(): void
    {
        self::assertNotNull(self::$server);
        $big = random_bytes(5 << 20);
        $small = "hello\r\n--not-the-boundary\r\n";
        $boundary = '----kiln' . bin2hex(random_bytes(8));
        $parts = [
            ["name=\"title\"", 'Holiday €'],
            ["name=\"tags[]\"", 'sea'],
            ["name=\"tags[]\"", 'sun'],
            ["name=\"photo\"; filename=\"beach.bin\"\r\nContent-Type: application/octet-stream", $big],
            ["name=\"notes[day1][]\"; filename=\"C:\\\\trip\\\\notes.txt\"\r\nContent-Type: text/plain", $small],
        ];
        $body = '';
        foreach ($parts as [$disposition, $content]) {
            $body .= "--$boundary\r\nContent-Disposition: form-data; $disposition\r\n\r\n$content\r\n";
        }
        $body .= "--$boundary--\r\n";

        $client = RawClient::to(self::$server);
        $client->send("POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Type: multipart/form-data; boundary=$boundary\r\n"
            . 'Content-Length: ' . \strlen($body) . "\r\n\r\n");
        foreach (str_split($body, 65536) as $piece) {
            $client->send($piece);
        }
        $response = $client->readResponse(30.0);
        self::assertNotNull($response);
        self::assertSame(200, $response['status'], $response['body']);
        $info = json_decode($response['body'], true, 512, \JSON_THROW_ON_ERROR);
        self::assertIsArray($info);

        self::assertTrue($info['spooled']);
        self::assertSame(['title' => 'Holiday €', 'tags' => ['sea', 'sun']], $info['fields']);
        self::assertSame(['photo', 'notes[day1][0]'], array_keys($info['files']));
        $photo = $info['files']['photo'];
        self::assertSame(['beach.bin', 'application/octet-stream', \UPLOAD_ERR_OK, 5 << 20, md5($big)], [$photo['client'], $photo['type'], $photo['error'], $photo['size'], $photo['md5']]);
        $notes = $info['files']['notes[day1][0]'];
        self::assertSame(['notes.txt', 'text/plain', \strlen($small), md5($small)], [$notes['client'], $notes['type'], $notes['size'], $notes['md5']]);

        // The next response on the same connection (one worker) comes after the first exchange ended.
        $client->send("GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n");
        self::assertSame('pong', $client->readResponse()['body'] ?? null);
        self::assertFileDoesNotExist($photo['path']);
        self::assertFileDoesNotExist($notes['path']);
        $client->close();
    }
}
