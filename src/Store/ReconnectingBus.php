<?php

declare(strict_types=1);

namespace Kiln\Store;

/**
 * A bus that stops hearing its channels while its connection to a server is broken, and follows them again on its
 * own once the server answers (RedisBus): what was published in between never reached this process.
 *
 * onResubscribed() callbacks MUST run once every channel is followed again, after each such gap; whatever is
 * published after a callback ran MUST arrive. A callback runs on the loop and MUST NOT suspend (it may start a
 * Fiber for work that waits).
 */
interface ReconnectingBus extends Bus
{
    /** @param \Closure(): void $callback */
    public function onResubscribed(\Closure $callback): void;
}
