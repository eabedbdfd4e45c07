<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Http;

/** A 1 GiB upload streams to a temporary file with bounded memory, and the file is gone afterwards. */
final class LargeUploadTest extends ServerTestCase
{
    protected static function serverArgs(): array
    {
        return ['--workers=1', '--limit-body-size=2147483648'];
    }

    public function testOneGibibyteUploadCostsBoundedMemoryAndLeavesNoTempFile(): void
    {
        $size = 1 << 30;
        $block = str_repeat(hash('sha256', 'kiln', true), 32768); // 1 MiB
        $client = $this->client();
        $client->send("PUT /echo-info HTTP/1.1\r\nHost: x\r\nContent-Length: $size\r\n\r\n");
        $md5 = hash_init('md5');
        for ($sent = 0; $sent < $size; $sent += \strlen($block)) {
            $client->send($block);
            hash_update($md5, $block);
        }
        $response = $client->readResponse(60.0);
        self::assertNotNull($response);
        self::assertSame(200, $response['status'], $response['body']);
        $info = json_decode($response['body'], true);
        self::assertIsArray($info);
        self::assertSame($size, $info['size']);
        self::assertSame(hash_final($md5), $info['md5']);
        self::assertTrue($info['spooled']);
        self::assertLessThan(32 << 20, $info['peak'], 'peak worker memory must not grow with the body');

        // The spooled body is closed (and, being unlinked at creation, gone) once the exchange ends.
        $client->send(self::get('/hello'));
        self::assertNotNull($client->readResponse());
        self::assertSame([], self::deletedFilesHeldBy((int) $info['pid']));
        $client->close();
    }

    public function testAbortedUploadLeavesNoTempFile(): void
    {
        $client = $this->client();
        $client->send("POST /echo-info HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n" . str_repeat('a', 5 << 20));
        $pid = (int) $this->exchange(self::get('/pid'))['body'];
        $deadline = microtime(true) + 5.0;
        while (self::deletedFilesHeldBy($pid) === [] && microtime(true) < $deadline) {
            usleep(20000);
        }
        self::assertNotEmpty(self::deletedFilesHeldBy($pid), 'the upload should be spooling to a file');
        $client->close();
        $deadline = microtime(true) + 5.0;
        while (self::deletedFilesHeldBy($pid) !== [] && microtime(true) < $deadline) {
            usleep(50000);
        }
        self::assertSame([], self::deletedFilesHeldBy($pid));
    }

    /** @return list<string> */
    private static function deletedFilesHeldBy(int $pid): array
    {
        $held = [];
        foreach (glob("/proc/$pid/fd/*") ?: [] as $fd) {
            $target = @readlink($fd);
            // Not memfds, nor opcache's lock file (/tmp/.ZendSem.*, unlinked at startup by design).
            if (\is_string($target) && str_ends_with($target, '(deleted)') && !str_contains($target, 'memfd')
                && !str_contains($target, '.ZendSem.')) {
                $held[] = $target;
            }
        }
        return $held;
    }
}
