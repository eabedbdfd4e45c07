<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Handler;

use Kiln\App\App;
use Kiln\App\Context;
use Kiln\App\Handler\HandlerInvoker;
use Kiln\App\Handler\OutputCapture;
use Kiln\Http\Request;
use Kiln\Http\Response;
use PHPUnit\Framework\TestCase;

abstract class InvokerTestCase extends TestCase
{
    protected HandlerInvoker $invoker;

    protected App $app;

    protected function setUp(): void
    {
        $this->invoker = new HandlerInvoker();
        $this->app = new App();
    }

    protected function tearDown(): void
    {
        OutputCapture::instance()->uninstall();
    }

    /** @param array<string, string> $params */
    protected function invoke(mixed $handler, array $params = [], ?Request $request = null, ?Context $context = null): Response
    {
        $request ??= RequestFactory::get();
        $context ??= new Context($request, $params);
        return $this->invoker->invoke($handler, $request, $params, $context, $this->app);
    }

    /** The whole body as a string, draining a streamed one. */
    protected static function body(Response $response): string
    {
        $body = $response->body();
        if (\is_string($body)) {
            return $body;
        }
        self::assertIsIterable($body);
        $out = '';
        foreach ($body as $chunk) {
            $out .= $chunk;
        }
        return $out;
    }

    /**
     * @return list<string> the chunks of a streamed body
     */
    protected static function chunks(Response $response): array
    {
        $body = $response->body();
        self::assertIsIterable($body);
        $chunks = [];
        foreach ($body as $chunk) {
            $chunks[] = $chunk;
        }
        return $chunks;
    }
}
