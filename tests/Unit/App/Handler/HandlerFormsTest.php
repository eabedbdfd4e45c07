<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Handler;

use Kiln\Tests\Unit\App\Handler\Fixture\AbstractController;
use Kiln\Tests\Unit\App\Handler\Fixture\CountingController;
use Kiln\Tests\Unit\App\Handler\Fixture\NeedsDatabase;
use Kiln\Tests\Unit\App\Handler\Fixture\ShowUser;
use PHPUnit\Framework\Attributes\DataProvider;

final class HandlerFormsTest extends InvokerTestCase
{
    public function testAClosureIsCalled(): void
    {
        self::assertSame('hi', self::body($this->invoke(static fn() => 'hi')));
    }

    public function testAFirstClassCallableIsCalled(): void
    {
        $handler = (new ShowUser())->plain(...);
        self::assertSame('hello ada', self::body($this->invoke($handler, ['name' => 'ada'])));
    }

    public function testAnInvokableObjectIsCalled(): void
    {
        $response = $this->invoke(new ShowUser(), ['id' => '7'], RequestFactory::get('/users/7'));
        self::assertSame('user 7 at /users/7', self::body($response));
    }

    public function testAClassAndMethodPairIsCalledOnOneInstancePerInvoker(): void
    {
        CountingController::$constructed = 0;
        $first = $this->invoke([CountingController::class, 'show'], ['id' => '1']);
        $second = $this->invoke(CountingController::class . '::show', ['id' => '2']);

        self::assertSame('user 1, call 1', self::body($first));
        self::assertSame('user 2, call 2', self::body($second));
        self::assertSame(1, CountingController::$constructed);
    }

    public function testAStaticMethodIsCalledStaticallyWithoutAnInstance(): void
    {
        CountingController::$constructed = 0;
        CountingController::$staticCalls = 0;
        $this->invoke([CountingController::class, 'about']);
        $response = $this->invoke('\\' . CountingController::class . '::about', [], RequestFactory::get('/about'));

        self::assertSame('about /about', self::body($response));
        self::assertSame(2, CountingController::$staticCalls);
        self::assertSame(0, CountingController::$constructed);
    }

    public function testAnObjectAndMethodPairIsCalledOnThatObject(): void
    {
        self::assertSame('hello bob', self::body($this->invoke([new ShowUser(), 'plain'], ['name' => 'bob'])));
    }

    public function testResolveAcceptsEveryForm(): void
    {
        $this->invoker->resolve(static fn() => 'x');
        $this->invoker->resolve(new ShowUser());
        $this->invoker->resolve([CountingController::class, 'show']);
        $this->invoker->resolve(CountingController::class . '::about');
        $this->invoker->resolve([new ShowUser(), 'plain']);
        $this->expectNotToPerformAssertions();
    }

    public function testResolveDoesNotInstantiateTheController(): void
    {
        CountingController::$constructed = 0;
        $this->invoker->resolve([CountingController::class, 'show']);
        self::assertSame(0, CountingController::$constructed);
    }

    public function testAControllerNeedingConstructorArgumentsIsRefusedByName(): void
    {
        $this->expectException(\Error::class);
        $this->expectExceptionMessageMatches('/class ' . preg_quote(NeedsDatabase::class, '/') . ' needs 1 constructor argument/');
        $this->invoker->resolve([NeedsDatabase::class, 'show']);
    }

    /** @return iterable<string, array{mixed, string}> */
    public static function unresolvable(): iterable
    {
        yield 'unknown class' => [['App\\Nope', 'show'], "'App\\Nope'"];
        yield 'unknown class in a string' => ['App\\Nope::show', "'App\\Nope'"];
        yield 'unknown method' => [[CountingController::class, 'missing'], 'has no method missing()'];
        yield 'private method' => [[CountingController::class, 'hidden'], 'is not public'];
        yield 'abstract class' => [[AbstractController::class, 'show'], 'cannot be instantiated'];
        yield 'object without __invoke' => [new \stdClass(), 'stdClass'];
        yield 'unknown method on an object' => [[new ShowUser(), 'missing'], 'has no method missing()'];
        yield 'a plain string' => ['not a handler', "'not a handler'"];
        yield 'an int' => [42, 'int'];
        yield 'null' => [null, 'null'];
        yield 'a three-element array' => [[CountingController::class, 'show', 'extra'], 'not a handler form'];
    }

    #[DataProvider('unresolvable')]
    public function testAnUnresolvableHandlerIsRefusedAtResolveNamingIt(mixed $handler, string $named): void
    {
        $this->expectException(\Error::class);
        $this->expectExceptionMessage($named);
        $this->invoker->resolve($handler);
    }

    #[DataProvider('unresolvable')]
    public function testAnUnresolvableHandlerFailsAtItsFirstCallNamingIt(mixed $handler, string $named): void
    {
        $this->expectException(\Error::class);
        $this->expectExceptionMessage($named);
        $this->invoke($handler);
    }

    public function testTheErrorForAnUnresolvableHandlerListsTheForms(): void
    {
        $this->expectExceptionMessage("use a Closure, an invokable object, [Class::class, 'method']");
        $this->invoker->resolve('nope');
    }
}
