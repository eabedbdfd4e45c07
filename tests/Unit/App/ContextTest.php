<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App;

use Kiln\App\Context;
use Kiln\Tests\Unit\App\Handler\RequestFactory;
use PHPUnit\Framework\TestCase;

final class ContextTest extends TestCase
{
    public function testItCarriesTheRequestAndItsRouteParameters(): void
    {
        $request = RequestFactory::get('/users/5');
        $context = new Context($request, ['id' => '5']);

        self::assertSame($request, $context->request());
        self::assertSame(['id' => '5'], $context->params());
        self::assertSame('5', $context->param('id'));
        self::assertNull($context->param('page'));
        self::assertSame('1', $context->param('page', '1'));
    }

    public function testValuesAreSetAndReadBack(): void
    {
        $context = new Context(RequestFactory::get());
        self::assertFalse($context->has('user'));
        self::assertSame('anonymous', $context->get('user', 'anonymous'));

        $context->set('user', ['id' => 7]);
        self::assertTrue($context->has('user'));
        self::assertSame(['id' => 7], $context->get('user'));
    }

    public function testAValueSetToNullIsPresentAndNotReplacedByTheDefault(): void
    {
        $context = new Context(RequestFactory::get());
        $context->set('user', null);

        self::assertTrue($context->has('user'));
        self::assertNull($context->get('user', 'anonymous'));
    }

    public function testTwoRequestsShareNothing(): void
    {
        $first = new Context(RequestFactory::get());
        $second = new Context(RequestFactory::get());
        $first->set('user', 'ada');

        self::assertFalse($second->has('user'));
    }
}
