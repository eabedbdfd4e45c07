<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware\SecurityHeaders;
use Kiln\Http\Response;
use PHPUnit\Framework\TestCase;

final class SecurityHeadersTest extends TestCase
{
    private static function apply(SecurityHeaders $headers, ?Response $app = null): Response
    {
        return $headers->process(Requests::make(), Requests::returning($app ?? Response::text('ok')));
    }

    public function testThePresetAddsTheBaselineHeadersButNotHstsOrCsp(): void
    {
        $response = self::apply(new SecurityHeaders());
        self::assertSame('nosniff', $response->header('X-Content-Type-Options'));
        self::assertSame('SAMEORIGIN', $response->header('X-Frame-Options'));
        self::assertSame('strict-origin-when-cross-origin', $response->header('Referrer-Policy'));
        self::assertSame('same-origin', $response->header('Cross-Origin-Opener-Policy'));
        self::assertFalse($response->hasHeader('Strict-Transport-Security'));
        self::assertFalse($response->hasHeader('Content-Security-Policy'));
    }

    public function testHeadersTheAppSetAreNeverOverridden(): void
    {
        $app = Response::text('ok');
        $app->setHeader('x-frame-options', 'DENY');
        $app->setHeader('Content-Security-Policy', "default-src 'none'");
        $response = self::apply(new SecurityHeaders(contentSecurityPolicy: "default-src 'self'"), $app);
        self::assertSame('DENY', $response->header('X-Frame-Options'));
        self::assertSame("default-src 'none'", $response->header('Content-Security-Policy'));
    }

    public function testEachHeaderCanBeChangedOrDisabled(): void
    {
        $response = self::apply(new SecurityHeaders(
            contentTypeOptions: null,
            frameOptions: 'DENY',
            referrerPolicy: null,
            crossOriginOpenerPolicy: 'same-origin-allow-popups',
            contentSecurityPolicy: "frame-ancestors 'none'",
        ));
        self::assertFalse($response->hasHeader('X-Content-Type-Options'));
        self::assertSame('DENY', $response->header('X-Frame-Options'));
        self::assertFalse($response->hasHeader('Referrer-Policy'));
        self::assertSame('same-origin-allow-popups', $response->header('Cross-Origin-Opener-Policy'));
        self::assertSame("frame-ancestors 'none'", $response->header('Content-Security-Policy'));
    }

    public function testHstsIsSentOnlyWhenConfigured(): void
    {
        $response = self::apply(new SecurityHeaders(hstsMaxAge: 31536000, hstsIncludeSubDomains: true, hstsPreload: true));
        self::assertSame('max-age=31536000; includeSubDomains; preload', $response->header('Strict-Transport-Security'));
        self::assertSame('max-age=300', self::apply(new SecurityHeaders(hstsMaxAge: 300))->header('Strict-Transport-Security'));
    }

    public function testBadConfigurationIsRefusedAtConstruction(): void
    {
        foreach ([
            static fn() => new SecurityHeaders(frameOptions: 'ALLOW-FROM https://x'),
            static fn() => new SecurityHeaders(referrerPolicy: 'sometimes'),
            static fn() => new SecurityHeaders(hstsPreload: true),
            static fn() => new SecurityHeaders(hstsMaxAge: 300, hstsIncludeSubDomains: true, hstsPreload: true),
            static fn() => new SecurityHeaders(hstsMaxAge: -1),
            static fn() => new SecurityHeaders(contentSecurityPolicy: "default-src 'self'\r\nX-Evil: 1"),
        ] as $i => $build) {
            try {
                $build();
                self::fail("case $i: expected ValueError");
            } catch (\ValueError) {
                self::addToAssertionCount(1);
            }
        }
    }

    public function testAnHttpErrorFromTheAppCarriesTheHeadersWithoutOverridingItsOwn(): void
    {
        $next = Requests::next(static fn(): never => throw new HttpErrorException(404, '', ['x-frame-options' => 'DENY']));
        try {
            (new SecurityHeaders())->process(Requests::make(), $next);
            self::fail('expected HttpErrorException');
        } catch (HttpErrorException $e) {
            self::assertSame(404, $e->status);
            self::assertSame('nosniff', $e->headers['X-Content-Type-Options']);
            self::assertSame('DENY', $e->headers['x-frame-options']);
            self::assertArrayNotHasKey('X-Frame-Options', $e->headers);
        }
    }
}
