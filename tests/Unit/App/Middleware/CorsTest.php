<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware\Cors;
use Kiln\Http\Request;
use Kiln\Http\Response;
use PHPUnit\Framework\TestCase;

final class CorsTest extends TestCase
{
    private const APP = 'https://app.example';

    /** @param array<string, string> $headers */
    private static function preflight(string $origin = self::APP, array $headers = []): Request
    {
        return Requests::make('OPTIONS', '/api', ['Origin' => $origin, 'Access-Control-Request-Method' => 'PUT'] + $headers);
    }

    public function testAPreflightFromAnAllowedOriginIsAnsweredWith204WithoutReachingTheApp(): void
    {
        $next = Requests::next();
        $cors = new Cors([self::APP], methods: ['GET', 'PUT'], headers: ['Content-Type', 'X-Token'], maxAge: 600);
        $response = $cors->process(self::preflight(headers: ['Access-Control-Request-Headers' => 'content-type, x-token']), $next);
        self::assertSame(0, $next->calls);
        self::assertSame(204, $response->status());
        self::assertSame(self::APP, $response->header('Access-Control-Allow-Origin'));
        self::assertSame('GET, PUT', $response->header('Access-Control-Allow-Methods'));
        self::assertSame('content-type, x-token', $response->header('Access-Control-Allow-Headers'));
        self::assertSame('600', $response->header('Access-Control-Max-Age'));
        self::assertNull($response->header('Access-Control-Allow-Credentials'));
        self::assertStringContainsString('Origin', (string) $response->header('Vary'));
    }

    public function testAPreflightReflectsOnlyTheAllowedRequestedHeaders(): void
    {
        $cors = new Cors([self::APP], headers: ['X-Token']);
        $response = $cors->process(self::preflight(headers: ['Access-Control-Request-Headers' => 'X-Token, X-Evil']), Requests::next());
        self::assertSame('x-token', $response->header('Access-Control-Allow-Headers'));
    }

    public function testAPreflightWithHeadersStarReflectsAnyRequestedHeader(): void
    {
        $cors = new Cors([self::APP], headers: '*');
        $response = $cors->process(self::preflight(headers: ['Access-Control-Request-Headers' => 'X-A,X-B']), Requests::next());
        self::assertSame('x-a, x-b', $response->header('Access-Control-Allow-Headers'));
    }

    public function testAPreflightFromADisallowedOriginIs403WithoutCorsHeaders(): void
    {
        $next = Requests::next();
        try {
            (new Cors([self::APP]))->process(self::preflight('https://evil.example'), $next);
            self::fail('expected HttpErrorException');
        } catch (HttpErrorException $e) {
            self::assertSame(403, $e->status);
            self::assertSame([], $e->headers);
        }
        self::assertSame(0, $next->calls);
    }

    public function testAnOptionsRequestWithoutRequestMethodIsNotAPreflight(): void
    {
        $next = Requests::next();
        (new Cors([self::APP]))->process(Requests::make('OPTIONS', '/', ['Origin' => self::APP]), $next);
        self::assertSame(1, $next->calls);
    }

    public function testASimpleRequestFromAnAllowedOriginGetsAllowOriginAndVary(): void
    {
        $cors = new Cors([self::APP], exposedHeaders: ['X-Total']);
        $response = $cors->process(Requests::make(headers: ['Origin' => self::APP]), Requests::next());
        self::assertSame(self::APP, $response->header('Access-Control-Allow-Origin'));
        self::assertSame('Origin', $response->header('Vary'));
        self::assertSame('X-Total', $response->header('Access-Control-Expose-Headers'));
        self::assertNull($response->header('Access-Control-Allow-Methods'));
    }

    public function testOriginsAreComparedCaseInsensitivelyAndTheRequestOriginIsEchoed(): void
    {
        $response = (new Cors(['https://App.Example']))->process(Requests::make(headers: ['Origin' => self::APP]), Requests::next());
        self::assertSame(self::APP, $response->header('Access-Control-Allow-Origin'));
    }

    public function testADisallowedOriginGetsTheResponseWithoutCorsHeadersButWithVary(): void
    {
        $response = (new Cors([self::APP]))->process(Requests::make(headers: ['Origin' => 'https://evil.example']), Requests::next());
        self::assertSame(200, $response->status());
        self::assertNull($response->header('Access-Control-Allow-Origin'));
        self::assertSame('Origin', $response->header('Vary'));
    }

    public function testVaryIsAppendedToWhatTheAppSet(): void
    {
        $app = Response::text('x');
        $app->setHeader('Vary', 'Accept-Encoding');
        $response = (new Cors([self::APP]))->process(Requests::make(headers: ['Origin' => self::APP]), Requests::returning($app));
        self::assertSame('Accept-Encoding, Origin', $response->header('Vary'));
    }

    public function testWildcardSendsStarAndNoVary(): void
    {
        $response = (new Cors('*'))->process(Requests::make(headers: ['Origin' => 'https://any.example']), Requests::next());
        self::assertSame('*', $response->header('Access-Control-Allow-Origin'));
        self::assertNull($response->header('Vary'));
    }

    public function testCredentialsReflectTheOriginAndNeverSendStar(): void
    {
        $cors = new Cors([self::APP], credentials: true);
        $response = $cors->process(Requests::make(headers: ['Origin' => self::APP]), Requests::next());
        self::assertSame(self::APP, $response->header('Access-Control-Allow-Origin'));
        self::assertSame('true', $response->header('Access-Control-Allow-Credentials'));
        $preflight = $cors->process(self::preflight(), Requests::next());
        self::assertSame(self::APP, $preflight->header('Access-Control-Allow-Origin'));
        self::assertSame('true', $preflight->header('Access-Control-Allow-Credentials'));
    }

    public function testCredentialsWithWildcardOriginsAreRefusedAtConstruction(): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('list the trusted origins');
        new Cors('*', credentials: true);
    }

    public function testAClosureDecidesTheOrigin(): void
    {
        $cors = new Cors(static fn(string $origin): bool => str_ends_with($origin, '.example.com'), credentials: true);
        $ok = $cors->process(Requests::make(headers: ['Origin' => 'https://a.example.com']), Requests::next());
        $no = $cors->process(Requests::make(headers: ['Origin' => 'https://example.org']), Requests::next());
        self::assertSame('https://a.example.com', $ok->header('Access-Control-Allow-Origin'));
        self::assertNull($no->header('Access-Control-Allow-Origin'));
    }

    public function testARequestWithoutOriginGetsNoCorsHeaders(): void
    {
        $response = (new Cors([self::APP]))->process(Requests::make(), Requests::next());
        self::assertNull($response->header('Access-Control-Allow-Origin'));
    }

    public function testBadConfigurationIsRefusedAtConstruction(): void
    {
        foreach ([
            static fn() => new Cors('https://app.example'),
            static fn() => new Cors(['https://app.example/path']),
            static fn() => new Cors([self::APP], methods: ['get']),
            static fn() => new Cors([self::APP], maxAge: -1),
        ] as $i => $build) {
            try {
                $build();
                self::fail("case $i: expected ValueError");
            } catch (\ValueError) {
                self::addToAssertionCount(1);
            }
        }
    }

    public function testAnHttpErrorFromTheAppCarriesTheCorsHeaders(): void
    {
        $cors = new Cors([self::APP], credentials: true);
        $next = Requests::next(static fn(): never => throw HttpErrorException::notFound());
        try {
            $cors->process(Requests::make(headers: ['Origin' => self::APP]), $next);
            self::fail('expected HttpErrorException');
        } catch (HttpErrorException $e) {
            self::assertSame(404, $e->status);
            self::assertSame(self::APP, $e->headers['Access-Control-Allow-Origin']);
            self::assertSame('true', $e->headers['Access-Control-Allow-Credentials']);
            self::assertSame('Origin', $e->headers['Vary']);
            self::assertInstanceOf(HttpErrorException::class, $e->getPrevious());
        }
    }
}
