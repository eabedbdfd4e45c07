<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Site;

use Kiln\Tests\Support\KilnPerTier;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * The sequential and fork tiers build $_POST and $_FILES under PHP's own limits, as php-cgi and mod_php do:
 * upload_max_filesize, max_file_uploads, post_max_size and max_input_vars, read from PHP's settings (the
 * sequential tier's worker is started with them, the fork server takes --php-ini). The script runs; what PHP
 * drops is dropped, and PHP's warning is logged.
 */
final class FormLimitsTest extends TestCase
{
    use KilnPerTier;

    private const ROOT = __DIR__ . '/../../Fixtures/form-limits';

    private const KILN = __DIR__ . '/../../../bin/kiln';

    private const INI = ['upload_max_filesize' => '100', 'max_file_uploads' => '3', 'post_max_size' => '2000', 'max_input_vars' => '5'];


    /** @return iterable<string, array{string}> */
    public static function tiers(): iterable
    {
        yield 'sequential' => ['sequential'];
        yield 'fork' => ['fork'];
    }

    #[DataProvider('tiers')]
    public function testAFileOverUploadMaxFilesizeArrivesWithTheIniSizeErrorAndNoFile(string $tier): void
    {
        $result = $this->post($tier, [['big', 'big.bin', str_repeat('b', 101)], ['small', 'small.txt', str_repeat('s', 100)], ['note', '', 'kept']]);
        self::assertSame(['note' => 'kept'], $result['post']);
        self::assertSame(\UPLOAD_ERR_INI_SIZE, $result['files']['big']['error']);
        self::assertSame(0, $result['files']['big']['size']);
        self::assertSame([false], $result['files']['big']['tmp_name'], 'no temporary file for a file PHP refused');
        self::assertSame(\UPLOAD_ERR_OK, $result['files']['small']['error'], 'a file of exactly upload_max_filesize is kept');
        self::assertSame(100, $result['files']['small']['size']);
        self::assertSame([true], $result['files']['small']['tmp_name']);
    }

    #[DataProvider('tiers')]
    public function testFilesPastMaxFileUploadsAreDroppedAndTheScriptRuns(string $tier): void
    {
        $parts = [['empty', '', '']]; // a file input left empty: PHP does not count it
        for ($i = 0; $i < 5; $i++) {
            $parts[] = ['f[]', "$i.txt", "file $i"];
        }
        $result = $this->post($tier, $parts, true);
        self::assertSame(\UPLOAD_ERR_NO_FILE, $result['files']['empty']['error']);
        self::assertSame(['0.txt', '1.txt', '2.txt'], $result['files']['f']['name']);
        self::assertSame([true, true, true], $result['files']['f']['tmp_name']);
        $this->serverWithLimits($tier)->waitForLog('~PHP Warning:  Maximum number of allowable file uploads has been exceeded~');
    }

    #[DataProvider('tiers')]
    public function testABodyOverPostMaxSizeLeavesTheFormEmptyAndTheScriptRuns(string $tier): void
    {
        $response = $this->send($tier, ...self::multipart([['note', '', 'a note'], ['doc', 'doc.txt', str_repeat('d', 1990)]]));
        $length = \strlen($response[1]);
        $result = $this->decode($tier, $response[0]);
        self::assertSame([], $result['post']);
        self::assertSame([], $result['files']);
        $this->serverWithLimits($tier)->waitForLog("~PHP Warning:  POST Content-Length of $length bytes exceeds the limit of 2000 bytes~");
    }

    #[DataProvider('tiers')]
    public function testFieldsPastMaxInputVarsAreDroppedAsPhpDropsThem(string $tier): void
    {
        $pairs = [];
        for ($i = 0; $i < 8; $i++) {
            $pairs[] = "v$i=$i";
        }
        // PHP keeps the urlencoded pair that goes past the limit (main/php_variables.c), and no multipart field past it.
        $urlencoded = $this->decode($tier, $this->send($tier, 'application/x-www-form-urlencoded', implode('&', $pairs))[0]);
        self::assertSame(['v0', 'v1', 'v2', 'v3', 'v4', 'v5'], array_keys($urlencoded['post']));
        $this->serverWithLimits($tier)->waitForLog('~PHP Warning:  PHP Request Startup: Input variables exceeded 5\. To increase the limit change max_input_vars~');
        $fields = [];
        for ($i = 0; $i < 8; $i++) {
            $fields[] = ["m$i", '', "$i"];
        }
        $multipart = $this->post($tier, $fields);
        self::assertSame(['m0', 'm1', 'm2', 'm3', 'm4'], array_keys($multipart['post']));
    }

    /** With PHP's start-up settings: the sequential tier reads them from its worker's PHP, the fork server takes --php-ini. */
    private function serverWithLimits(string $tier): KilnProcess
    {
        return $this->server($tier, static function (string $tier): KilnProcess {
            $php = $ini = [];
            foreach (self::INI as $name => $value) {
                array_push($php, '-d', "$name=$value");
                $ini[] = "--php-ini=$name=$value";
            }
            $command = $tier === 'sequential' ? [PHP_BINARY, ...$php, self::KILN] : [PHP_BINARY, self::KILN];
            return KilnProcess::launch([...$command, 'serve', self::ROOT, '--listen=127.0.0.1:0', '--workers=1', "--tier=$tier", ...($tier === 'fork' ? $ini : [])]);
        });
    }

    /**
     * @param list<array{string, string, string}> $parts field name, filename ('' for a plain field), content
     * @return array{post: array<string, mixed>, files: array<string, array<string, mixed>>}
     */
    private function post(string $tier, array $parts, bool $emptyFilenames = false): array
    {
        [$type, $body] = self::multipart($parts, $emptyFilenames);
        return $this->decode($tier, $this->send($tier, $type, $body)[0]);
    }

    /** @return array{array{status: int, body: string}, string} the response and the body sent */
    private function send(string $tier, string $type, string $body): array
    {
        $client = RawClient::to($this->serverWithLimits($tier));
        $client->send("POST /vars.php HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Type: $type\r\nContent-Length: " . \strlen($body) . "\r\n\r\n$body");
        $response = $client->readResponse(10.0);
        $client->close();
        self::assertNotNull($response, "no response; log:\n" . $this->serverWithLimits($tier)->log());
        return [$response, $body];
    }

    /**
     * @param array{status: int, body: string} $response
     * @return array{post: array<string, mixed>, files: array<string, array<string, mixed>>}
     */
    private function decode(string $tier, array $response): array
    {
        self::assertSame(200, $response['status'], "the script runs; body: {$response['body']}; log:\n" . $this->serverWithLimits($tier)->log());
        $data = json_decode($response['body'], true);
        self::assertIsArray($data, 'not JSON: ' . $response['body']);
        /** @var array{post: array<string, mixed>, files: array<string, array<string, mixed>>} $data */
        return $data;
    }

    /**
     * @param list<array{string, string, string}> $parts
     * @return array{string, string} content type, body
     */
    private static function multipart(array $parts, bool $emptyFilenames = false): array
    {
        $boundary = 'kiln' . bin2hex(random_bytes(8));
        $body = '';
        foreach ($parts as [$name, $filename, $content]) {
            $file = $filename !== '' || ($emptyFilenames && $content === '');
            $body .= "--$boundary\r\nContent-Disposition: form-data; name=\"$name\""
                . ($file ? "; filename=\"$filename\"\r\nContent-Type: text/plain" : '') . "\r\n\r\n$content\r\n";
        }
        return ["multipart/form-data; boundary=$boundary", "$body--$boundary--\r\n"];
    }
}
