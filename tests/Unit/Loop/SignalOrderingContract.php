<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\Driver;

/**
 * Part of the Driver contract (DriverTestCase): pending signals are dispatched before each poll, so a
 * signal that arrived while PHP code ran reaches its watchers before the next poll's I/O callbacks.
 *
 * @property Driver $loop
 */
trait SignalOrderingContract
{
    public function testASignalReceivedWhileCallbacksRunIsDispatchedBeforeTheNextPollsIoCallbacks(): void
    {
        [$a, $b] = self::pair();
        $order = [];
        $signal = $this->loop->onSignal(\SIGUSR2, static function () use (&$order): void {
            $order[] = 'signal';
        });
        $this->loop->unreference($signal);
        $this->loop->onReadable($a, function (string $id) use (&$order): void {
            $order[] = 'readable';
            $this->loop->cancel($id);
        });
        // Both happen while PHP code runs (a deferred callback), so the next poll finds the stream ready at once.
        $this->loop->defer(static function () use ($b): void {
            \fwrite($b, 'request');
            \posix_kill(\getmypid(), \SIGUSR2);
        });
        try {
            $this->runGuarded();
        } finally {
            $this->loop->cancel($signal);
        }
        self::assertSame(['signal', 'readable'], $order);
    }
}
