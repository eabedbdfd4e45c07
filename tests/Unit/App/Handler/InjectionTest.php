<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Handler;

use Kiln\App\App;
use Kiln\App\Context;
use Kiln\App\HttpErrorException;
use Kiln\Http\Request;
use Kiln\Http\Response;
use PHPUnit\Framework\Attributes\DataProvider;

final class InjectionTest extends InvokerTestCase
{
    public function testRequestContextAndAppAreInjectedByTypeInAnyOrder(): void
    {
        $request = RequestFactory::get('/a');
        $context = new Context($request);
        $seen = [];
        $this->invoke(static function (App $app, Context $c, Request $r) use (&$seen): string {
            $seen = [$app, $c, $r];
            return '';
        }, [], $request, $context);

        self::assertSame([$this->app, $context, $request], $seen);
    }

    public function testWithoutAContextGivenOneIsMadeForAHandlerThatTakesIt(): void
    {
        $request = RequestFactory::get('/a');
        $seen = [];
        $this->invoker->invoke(static function (Context $c, Context $again) use (&$seen): string {
            $seen = [$c, $again];
            return '';
        }, $request, ['id' => '7'], null, $this->app);

        self::assertSame($seen[0], $seen[1]);
        self::assertSame($request, $seen[0]->request());
        self::assertSame(['id' => '7'], $seen[0]->params());
    }

    public function testAnInjectedResponseFilledAndNotReturnedIsSent(): void
    {
        $response = $this->invoke(static function (Response $response): void {
            $response->setStatus(201);
            $response->setHeader('Content-Type', 'text/plain');
            $response->setBody('created');
        });

        self::assertSame(201, $response->status());
        self::assertSame('text/plain', $response->header('Content-Type'));
        self::assertSame('created', self::body($response));
    }

    public function testAnInjectedResponseGetsTheEchoedOutputAsItsEmptyBody(): void
    {
        $response = $this->invoke(static function (Response $response): void {
            $response->setHeader('X-Page', 'home');
            echo '<h1>home</h1>';
        });

        self::assertSame(200, $response->status());
        self::assertSame('home', $response->header('X-Page'));
        self::assertSame('text/html; charset=utf-8', $response->header('Content-Type'));
        self::assertSame('<h1>home</h1>', self::body($response));
    }

    public function testAnInjectedResponseLeftUntouchedFallsBackToTheNullContract(): void
    {
        self::assertSame(204, $this->invoke(static function (Response $response): void {})->status());
    }

    public function testTheInjectedResponseItselfMayBeReturned(): void
    {
        $response = $this->invoke(static function (Response $response): Response {
            $response->setBody('mine');
            return $response;
        });
        self::assertSame('mine', self::body($response));
    }

    public function testHeadersAndStatusSetOnTheInjectedResponseApplyToAReturnedValue(): void
    {
        $response = $this->invoke(static function (Response $response): array {
            $response->setStatus(201);
            $response->setHeader('Location', '/users/5');
            $response->setHeader('Content-Type', 'application/vnd.user+json');
            return ['id' => 5];
        });

        self::assertSame(201, $response->status());
        self::assertSame('/users/5', $response->header('Location'));
        self::assertSame('application/vnd.user+json', $response->header('Content-Type'));
        self::assertSame('{"id":5}', self::body($response));
    }

    /** @return iterable<string, array{string, string, mixed}> */
    public static function coercions(): iterable
    {
        yield 'int' => ['int', '42', 42];
        yield 'int negative' => ['int', '-7', -7];
        yield 'int leading zeros' => ['int', '007', 7];
        yield 'int zero' => ['int', '0', 0];
        yield 'int minus zero' => ['int', '-0', 0];
        yield 'int max' => ['int', (string) PHP_INT_MAX, PHP_INT_MAX];
        yield 'int min' => ['int', (string) PHP_INT_MIN, PHP_INT_MIN];
        yield 'float' => ['float', '1.5', 1.5];
        yield 'float integer' => ['float', '3', 3.0];
        yield 'float negative exponent' => ['float', '-2.5e3', -2500.0];
        yield 'float leading dot' => ['float', '.5', 0.5];
        yield 'bool 1' => ['bool', '1', true];
        yield 'bool 0' => ['bool', '0', false];
        yield 'bool true' => ['bool', 'true', true];
        yield 'bool FALSE' => ['bool', 'FALSE', false];
        yield 'bool yes' => ['bool', 'yes', true];
        yield 'bool no' => ['bool', 'no', false];
        yield 'bool on' => ['bool', 'on', true];
        yield 'bool off' => ['bool', 'off', false];
        yield 'string' => ['string', 'ada lovelace', 'ada lovelace'];
        yield 'string empty' => ['string', '', ''];
        yield 'mixed is a string' => ['mixed', '42', '42'];
        yield 'untyped is a string' => ['', '42', '42'];
        yield 'union prefers int' => ['int|string', '42', 42];
        yield 'union falls back to string' => ['int|string', 'abc', 'abc'];
        yield 'nullable int' => ['?int', '5', 5];
    }

    #[DataProvider('coercions')]
    public function testARouteParameterIsCoercedToTheDeclaredType(string $type, string $value, mixed $expected): void
    {
        $seen = null;
        $this->invoke($this->handlerTaking($type, $seen), ['value' => $value]);
        self::assertSame($expected, $seen);
    }

    /** @return iterable<string, array{string, string}> */
    public static function misfits(): iterable
    {
        yield 'int letters' => ['int', 'abc'];
        yield 'int empty' => ['int', ''];
        yield 'int decimal' => ['int', '1.5'];
        yield 'int plus sign' => ['int', '+5'];
        yield 'int spaces' => ['int', ' 5'];
        yield 'int trailing newline' => ['int', "5\n"];
        yield 'int lone minus' => ['int', '-'];
        yield 'int overflow' => ['int', '9223372036854775808'];
        yield 'int underflow' => ['int', '-9223372036854775809'];
        yield 'int hex' => ['int', '0x1A'];
        yield 'float letters' => ['float', 'abc'];
        yield 'float INF' => ['float', 'INF'];
        yield 'float NAN' => ['float', 'NAN'];
        yield 'float overflow' => ['float', '1e999'];
        yield 'float spaces' => ['float', ' 1.5'];
        yield 'float empty' => ['float', ''];
        yield 'bool maybe' => ['bool', 'maybe'];
        yield 'bool 2' => ['bool', '2'];
        yield 'bool empty' => ['bool', ''];
        yield 'nullable int' => ['?int', 'abc'];
        yield 'int|float' => ['int|float', 'abc'];
    }

    #[DataProvider('misfits')]
    public function testARouteParameterThatDoesNotFitItsTypeIsA404(string $type, string $value): void
    {
        $seen = null;
        try {
            $this->invoke($this->handlerTaking($type, $seen), ['value' => $value]);
            self::fail("'$value' was accepted as $type");
        } catch (HttpErrorException $e) {
            self::assertSame(404, $e->status);
        }
    }

    public function testAnAbsentRouteParameterTakesTheDefaultValue(): void
    {
        $response = $this->invoke(static fn(int $page = 1, string $sort = 'name') => "$page/$sort", ['page' => '3']);
        self::assertSame('3/name', self::body($response));
    }

    public function testAnAbsentNullableRouteParameterIsNull(): void
    {
        $seen = 'unset';
        $this->invoke(static function (?int $page) use (&$seen): string {
            $seen = $page;
            return '';
        });
        self::assertNull($seen);
    }

    public function testAParameterTheInvokerCannotSupplyTakesItsDefault(): void
    {
        $response = $this->invoke(static fn(array $options = ['a'], ?\DateTimeInterface $at = null) => \count($options) . ($at === null ? '-' : '+'));
        self::assertSame('1-', self::body($response));
    }

    public function testAVariadicParameterReceivesNothing(): void
    {
        self::assertSame('0', self::body($this->invoke(static fn(string ...$rest) => (string) \count($rest), ['rest' => 'x'])));
    }

    public function testAMissingRequiredRouteParameterIsAProgrammerErrorNamingHandlerAndParameter(): void
    {
        $this->expectException(\Error::class);
        $this->expectExceptionMessageMatches('/closure defined at .*InjectionTest\.php:\d+ needs route parameter \$id/');
        $this->invoke(static fn(int $id) => "user $id", ['name' => 'x']);
    }

    public function testARequiredParameterOfAnUnsupportedTypeIsRefusedAtResolve(): void
    {
        $this->expectException(\Error::class);
        $this->expectExceptionMessageMatches('/closure defined at .*: cannot supply parameter \$at of type DateTimeInterface/');
        $this->invoker->resolve(static fn(\DateTimeInterface $at) => '');
    }

    /** A file without `use Kiln\Http\Request;` types its parameter with a class of its own namespace, which does not exist. */
    public function testAParameterTypedWithAClassThatDoesNotExistIsRefusedWithTheUseLineItLikelyLacks(): void
    {
        try {
            $this->invoker->resolve(static fn(Missing\Request $r) => ''); // @phpstan-ignore class.notFound
            self::fail('a handler taking a class that does not exist was accepted');
        } catch (\Error $e) {
            self::assertStringContainsString('cannot supply parameter $r of type Kiln\Tests\Unit\App\Handler\Missing\Request: there is no class '
                . 'Kiln\Tests\Unit\App\Handler\Missing\Request (is `use Kiln\Http\Request;` missing from the file?); a handler can take', $e->getMessage());
        }
        $this->expectException(\Error::class);
        $this->expectExceptionMessage('of type NoSuchThing: there is no class NoSuchThing (is a `use` line missing from the file?)');
        $this->invoker->resolve(static fn(\NoSuchThing $thing) => ''); // @phpstan-ignore class.notFound
    }

    public function testARequiredArrayParameterIsRefused(): void
    {
        $this->expectException(\Error::class);
        $this->expectExceptionMessage('cannot supply parameter $options of type array');
        $this->invoke(static fn(array $options) => '');
    }

    /** A closure with one parameter `$value` of the given type that records what it got. */
    private function handlerTaking(string $type, mixed &$seen): \Closure
    {
        $record = static function (mixed $value) use (&$seen): string {
            $seen = $value;
            return '';
        };
        return match ($type) {
            'int' => static fn(int $value) => $record($value),
            '?int' => static fn(?int $value) => $record($value),
            'float' => static fn(float $value) => $record($value),
            'bool' => static fn(bool $value) => $record($value),
            'string' => static fn(string $value) => $record($value),
            'mixed' => static fn(mixed $value) => $record($value),
            '' => static fn($value) => $record($value),
            'int|string' => static fn(int|string $value) => $record($value),
            'int|float' => static fn(int|float $value) => $record($value),
            default => throw new \LogicException("no handler for $type"),
        };
    }
}
