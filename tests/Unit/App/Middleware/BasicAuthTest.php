<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware\BasicAuth;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class BasicAuthTest extends TestCase
{
    private static ?BasicAuth $auth = null;

    private static function auth(): BasicAuth
    {
        // Cost 4 keeps the suite fast; production hashes use password_hash's default cost.
        return self::$auth ??= new BasicAuth(
            ['alice' => password_hash('s3cret:with:colons', PASSWORD_BCRYPT, ['cost' => 4])],
            realm: 'Admin',
        );
    }

    private static function basic(string $userPass): string
    {
        return 'Basic ' . base64_encode($userPass);
    }

    public function testGoodCredentialsPassAndSetTheUserAttribute(): void
    {
        $next = Requests::next();
        $request = Requests::make(headers: ['Authorization' => self::basic('alice:s3cret:with:colons')]);
        self::auth()->process($request, $next);
        self::assertSame(1, $next->calls);
        self::assertSame('alice', $request->attribute('user'));
    }

    public function testASecondSuccessIsServedFromTheCacheWithTheSameResult(): void
    {
        $request = Requests::make(headers: ['Authorization' => 'basic  ' . base64_encode('alice:s3cret:with:colons')]);
        self::auth()->process($request, Requests::next());
        self::auth()->process($request, Requests::next());
        self::assertSame('alice', $request->attribute('user'));
    }

    /** @return iterable<string, array{string|null}> */
    public static function refused(): iterable
    {
        yield 'missing' => [null];
        yield 'wrong password' => [self::basic('alice:wrong')];
        yield 'unknown user' => [self::basic('bob:s3cret:with:colons')];
        yield 'empty password' => [self::basic('alice:')];
        yield 'no colon' => [self::basic('alice')];
        yield 'not base64' => ['Basic !!!notbase64'];
        yield 'empty credentials' => ['Basic '];
        yield 'other scheme' => ['Bearer ' . base64_encode('alice:s3cret:with:colons')];
        yield 'trailing garbage' => [self::basic('alice:s3cret:with:colons') . ' extra'];
    }

    #[DataProvider('refused')]
    public function testMissingWrongOrMalformedCredentialsGive401WithChallenge(?string $authorization): void
    {
        $next = Requests::next();
        try {
            self::auth()->process(Requests::make(headers: $authorization === null ? [] : ['Authorization' => $authorization]), $next);
            self::fail('expected HttpErrorException');
        } catch (HttpErrorException $e) {
            self::assertSame(401, $e->status);
            self::assertSame('Basic realm="Admin", charset="UTF-8"', $e->headers['WWW-Authenticate']);
        }
        self::assertSame(0, $next->calls);
    }

    public function testAClosureDecides(): void
    {
        $auth = new BasicAuth(static fn(string $user, string $pass): bool => hash_equals('token', $pass) && $user === 'svc');
        $request = Requests::make(headers: ['Authorization' => self::basic('svc:token')]);
        $auth->process($request, Requests::next());
        self::assertSame('svc', $request->attribute('user'));
        $this->expectException(HttpErrorException::class);
        $auth->process(Requests::make(headers: ['Authorization' => self::basic('svc:nope')]), Requests::next());
    }

    public function testAPlainPasswordIsRefusedAtConstruction(): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('password_hash()');
        new BasicAuth(['alice' => 'plaintext']);
    }

    public function testAnEmptyUserListIsRefusedAtConstruction(): void
    {
        $this->expectException(\ValueError::class);
        new BasicAuth([]);
    }
}
