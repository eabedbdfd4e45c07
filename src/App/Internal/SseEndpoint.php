<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\App\Context;
use Kiln\Http\Realtime\Hub;
use Kiln\Http\Sse\EventStream;

/**
 * The handler of an `sse()` route: makes the request's EventStream, then follows the route's `{topic}` or
 * hands the stream to the app's handler, and answers with the stream's response unless that handler
 * returned another.
 *
 * @internal
 */
final class SseEndpoint
{
    /**
     * @param (\Closure(EventStream, Context): mixed)|null $handler
     * @param \Closure(): Hub $hub the worker's (known once the worker configured the App)
     */
    public function __construct(
        private readonly ?\Closure $handler,
        private readonly \Closure $hub,
    ) {}

    public function handle(Context $context): mixed
    {
        $stream = EventStream::for($context->request());
        if ($this->handler === null) {
            ($this->hub)()->subscribe((string) $context->param('topic'), $stream);
            return $stream->response();
        }
        $result = ($this->handler)($stream, $context);
        return $result === null || $result === $stream ? $stream->response() : $result;
    }
}
