<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http;

use Kiln\Http\BadRequestBodyException;
use Kiln\Http\Body\BodyLimits;
use Kiln\Http\ForwardedClient;
use Kiln\Http\Request;
use Kiln\Http\UploadedFile;
use Kiln\Http\Wire\RequestHead;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class RequestTest extends TestCase
{
    /** @param array<string, string|list<string>> $headers */
    private static function request(array $headers = [], string $body = '', bool $spooled = false): Request
    {
        $lower = [];
        foreach ($headers as $name => $value) {
            $lower[strtolower($name)] = \is_array($value) ? $value : [$value];
        }
        $kind = $body === '' ? RequestHead::BODY_NONE : RequestHead::BODY_LENGTH;
        $head = new RequestHead('POST', '/', '1.1', $lower, '/', '', 'localhost', $kind, \strlen($body), true, false);
        $file = null;
        if ($spooled) {
            $file = tmpfile();
            fwrite($file, $body);
            $body = '';
        }
        return new Request($head, $body, $file, '192.0.2.7', 40000);
    }

    public function testCookiesAreParsedOnceFromEveryCookieHeader(): void
    {
        $request = self::request(['Cookie' => ['sid=abc%20d; theme=dark', 'sid=other; lang=fr']]);
        self::assertSame(['sid' => 'abc d', 'theme' => 'dark', 'lang' => 'fr'], $request->cookies());
        self::assertSame('dark', $request->cookie('theme'));
        self::assertNull($request->cookie('missing'));
        self::assertSame([], self::request()->cookies());
    }

    public function testUrlencodedBodiesBecomeNestedFields(): void
    {
        $request = self::request(['Content-Type' => 'application/x-www-form-urlencoded; charset=UTF-8'], 'a=1&b[]=2&b[]=3&c[x][y]=%C3%A9+z');
        self::assertSame(['a' => '1', 'b' => ['2', '3'], 'c' => ['x' => ['y' => 'é z']]], $request->parsedBody());
        self::assertSame([], $request->files());
    }

    /** @return iterable<string, array{string, array<array-key, mixed>}> */
    public static function jsonBodies(): iterable
    {
        yield 'object' => ['{"a":{"b":[1,2]}}', ['a' => ['b' => [1, 2]]]];
        yield 'array' => ['[1,"x"]', [1, 'x']];
        yield 'scalar' => ['42', []];
    }

    /** @param array<array-key, mixed> $expected */
    #[DataProvider('jsonBodies')]
    public function testJsonBodiesBecomeArrays(string $body, array $expected): void
    {
        self::assertSame($expected, self::request(['Content-Type' => 'application/json'], $body)->parsedBody());
        self::assertSame($expected, self::request(['Content-Type' => 'application/problem+json'], $body)->parsedBody());
    }

    public function testJsonIsDecodedWhateverTheContentType(): void
    {
        self::assertSame(42, self::request(['Content-Type' => 'text/plain'], '42')->json());
        self::assertNull(self::request()->json());
        self::assertSame([], self::request(['Content-Type' => 'text/plain'], 'a=1')->parsedBody());
    }

    public function testInvalidJsonIsABadRequestBodyWithStatus400(): void
    {
        try {
            self::request(['Content-Type' => 'application/json'], '{"a":')->parsedBody();
            self::fail('invalid JSON accepted');
        } catch (BadRequestBodyException $e) {
            self::assertSame(400, $e->getCode());
            self::assertInstanceOf(\Kiln\Http\HttpException::class, $e);
        }
    }

    /** @return iterable<string, array{string, string, int}> */
    public static function overLimits(): iterable
    {
        $form = 'application/x-www-form-urlencoded';
        yield 'too many fields' => [$form, 'a=1&b=2&c=3&d=4', 413];
        yield 'nested too deep' => [$form, 'a[b][c][d]=1', 400];
        yield 'nested too deep, encoded' => [$form, 'a%5Bb%5D%5Bc%5D%5Bd%5D=1', 400];
        yield 'body too large' => [$form, 'a=' . str_repeat('x', 200), 413];
        yield 'json too deep' => ['application/json', '[[[[1]]]]', 400];
        yield 'json too large' => ['application/json', '"' . str_repeat('x', 200) . '"', 413];
    }

    #[DataProvider('overLimits')]
    public function testBodiesOverTheLimitsAreRefused(string $type, string $body, int $status): void
    {
        $request = self::request(['Content-Type' => $type], $body);
        $request->setBodyLimits(new BodyLimits(fields: 3, depth: 2, formBytes: 100));
        try {
            $request->parsedBody();
            self::fail('accepted');
        } catch (BadRequestBodyException $e) {
            self::assertSame($status, $e->getCode(), $e->getMessage());
        }
        self::assertSame(['a' => ['b' => ['c' => '1']]], self::request(['Content-Type' => 'application/x-www-form-urlencoded'], 'a[b][c]=1')->parsedBody());
    }

    private static function multipart(): string
    {
        $parts = [
            ['title', 'Hello', null], ['tags[]', 'a', null], ['tags[]', 'b', null],
            ['avatar', 'PNGDATA', 'me.png'], ['docs[x][]', 'one', '1.txt'], ['docs[x][]', 'two', '2.txt'], ['a.b', 'dot', 'd.txt'],
        ];
        $body = '';
        foreach ($parts as [$name, $value, $filename]) {
            $body .= "--b0undary\r\nContent-Disposition: form-data; name=\"$name\"" . ($filename === null ? '' : "; filename=\"$filename\"") . "\r\n\r\n$value\r\n";
        }
        return $body . "--b0undary--\r\n";
    }

    /** @return iterable<string, array{bool}> */
    public static function spooling(): iterable
    {
        yield 'in memory' => [false];
        yield 'spooled to a file' => [true];
    }

    #[DataProvider('spooling')]
    public function testMultipartFieldsAndFilesAreNestedByName(bool $spooled): void
    {
        $request = self::request(['Content-Type' => 'multipart/form-data; boundary=b0undary'], self::multipart(), $spooled);
        self::assertSame(['title' => 'Hello', 'tags' => ['a', 'b']], $request->parsedBody());
        $files = $request->files();
        self::assertSame(['avatar', 'docs', 'a_b'], array_keys($files));
        self::assertInstanceOf(UploadedFile::class, $files['avatar']);
        self::assertSame('PNGDATA', $files['avatar']->contents());
        self::assertIsArray($files['docs']);
        self::assertIsArray($files['docs']['x']);
        self::assertSame(['1.txt', '2.txt'], array_map(static fn(UploadedFile $f): string => $f->clientFilename(), $files['docs']['x']));

        $paths = [$files['avatar']->path(), $files['docs']['x'][0]->path(), $files['docs']['x'][1]->path()];
        $kept = sys_get_temp_dir() . '/kiln-request-test-' . getmypid();
        $files['docs']['x'][1]->moveTo($kept);
        $request->releaseBody();
        foreach ($paths as $path) {
            self::assertFileDoesNotExist($path);
        }
        self::assertSame('two', file_get_contents($kept));
        unlink($kept);
    }

    public function testAMultipartBodyWithoutBoundaryIsABadRequest(): void
    {
        $this->expectException(BadRequestBodyException::class);
        self::request(['Content-Type' => 'multipart/form-data'], 'x')->files();
    }

    public function testClientIpAndSchemeComeFromTheForwardedClientElseThePeer(): void
    {
        $request = self::request();
        self::assertSame('192.0.2.7', $request->clientIp());
        self::assertSame('http', $request->scheme());
        self::assertNull($request->forwardedClient());
        $request->setAttribute('client_ip', '203.0.113.9'); // an untyped attribute of that name means nothing
        self::assertSame('192.0.2.7', $request->clientIp());
        $client = new ForwardedClient('203.0.113.9', 'https', 'shop.example.com', 443);
        $request->setForwardedClient($client);
        self::assertSame('203.0.113.9', $request->clientIp());
        self::assertSame('https', $request->scheme());
        self::assertSame($client, $request->forwardedClient());
        self::assertSame($client, $request->attribute(ForwardedClient::class));
    }

    public function testBodyLimitsCannotChangeAfterParsing(): void
    {
        $request = self::request(['Content-Type' => 'application/json'], '{}');
        $request->parsedBody();
        $this->expectException(\Error::class);
        $request->setBodyLimits(new BodyLimits());
    }
}
