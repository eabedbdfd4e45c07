<?php

declare(strict_types=1);

namespace Kiln\Loop;

use Kiln\Loop\Driver\EpollDriver;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Internal\FiberPool;
use Kiln\Loop\Internal\SignalHub;

/**
 * The process-wide loop accessor (the only global of Kiln) and the Fiber scheduler.
 *
 * Static proxies forward to the current Driver; see Driver for the contract of each. The ones every request
 * passes through (now, defer, enable, disable, cancel) read the driver field directly and call get() only when
 * none is set yet: one call less each.
 */
final class Loop
{
    private static ?Driver $driver = null;
    private static ?FiberPool $pool = null;
    private static ?\Closure $errorHandler = null;

    private function __construct() {}

    public static function get(): Driver
    {
        return self::$driver ??= new SelectDriver();
    }

    public static function set(Driver $driver): void
    {
        if (self::$driver?->isRunning()) {
            throw new \Error('Cannot replace the driver while it is running');
        }
        self::$driver = $driver;
    }

    /**
     * A driver for about $connections streams: select while they fit below FD_SETSIZE, else epoll if
     * FFI is usable, else select anyway (the caller must cap connections to capacity() and log it).
     */
    public static function createDriver(int $connections): Driver
    {
        if ($connections > SelectDriver::CAPACITY && EpollDriver::isSupported()) {
            return new EpollDriver();
        }

        return new SelectDriver();
    }

    /**
     * Runs $job in a pooled Fiber, starting now and synchronously until its first suspension.
     * An exception escaping $job goes to the error handler, or without one is thrown out of run().
     *
     * @param \Closure(): mixed $job
     */
    public static function async(\Closure $job): void
    {
        (self::$pool ??= new FiberPool(self::reportError(...)))->run($job);
    }

    /**
     * Runs $job in a pooled Fiber at the end of this loop turn, after the callbacks queue()d before it. The
     * jobs queued during one turn share one Fiber until one of them suspends: for work a loop callback starts
     * that need not start at once (a request just parsed), it saves two Fiber switches a job.
     * An exception escaping $job goes to the error handler, or without one is thrown out of run().
     *
     * @param \Closure(): mixed $job
     */
    public static function queueAsync(\Closure $job): void
    {
        (self::$pool ??= new FiberPool(self::reportError(...)))->later($job);
    }

    /** @param (\Closure(\Throwable): void)|null $handler called from a loop callback; null: rethrow from run() */
    public static function setErrorHandler(?\Closure $handler): void
    {
        self::$errorHandler = $handler;
    }

    /** A suspension of the current Fiber, or of {main} when called outside any Fiber. */
    public static function getSuspension(): Suspension
    {
        return new Suspension(\Fiber::getCurrent());
    }

    /** @param \Closure(string, resource): void $callback */
    public static function onReadable(mixed $stream, \Closure $callback): string
    {
        return self::get()->onReadable($stream, $callback);
    }

    /**
     * See Driver::onReadableUnbuffered(): turns $stream's PHP read buffer off.
     *
     * @param \Closure(string, resource): void $callback
     */
    public static function onReadableUnbuffered(mixed $stream, \Closure $callback): string
    {
        return self::get()->onReadableUnbuffered($stream, $callback);
    }

    /** @param \Closure(string, resource): void $callback */
    public static function onWritable(mixed $stream, \Closure $callback): string
    {
        return self::get()->onWritable($stream, $callback);
    }

    /** @param \Closure(string): void $callback */
    public static function delay(float $seconds, \Closure $callback): string
    {
        return self::get()->delay($seconds, $callback);
    }

    /** @param \Closure(string): void $callback */
    public static function repeat(float $interval, \Closure $callback): string
    {
        return self::get()->repeat($interval, $callback);
    }

    /** @param \Closure(string): void $callback */
    public static function defer(\Closure $callback): string
    {
        return (self::$driver ?? self::get())->defer($callback);
    }

    /**
     * See Driver::queue(): defer() without a watcher, for work queued on every turn.
     *
     * @param \Closure(): void $callback
     */
    public static function queue(\Closure $callback): void
    {
        (self::$driver ?? self::get())->queue($callback);
    }

    /**
     * @param \Closure(string, int): void $callback
     * @throws \Error for a signal reserveSignal() holds
     */
    public static function onSignal(int $signal, \Closure $callback): string
    {
        return self::get()->onSignal($signal, $callback);
    }

    /**
     * Keeps $signal for a handler installed with pcntl_signal() by the caller: onSignal() for it then throws an
     * \Error saying $why (the loop's handler and the caller's would replace each other). Null gives it back.
     */
    public static function reserveSignal(int $signal, ?string $why): void
    {
        SignalHub::reserve($signal, $why);
    }

    public static function disable(string $id): void
    {
        (self::$driver ?? self::get())->disable($id);
    }

    public static function enable(string $id): void
    {
        (self::$driver ?? self::get())->enable($id);
    }

    public static function cancel(string $id): void
    {
        (self::$driver ?? self::get())->cancel($id);
    }

    public static function unreference(string $id): void
    {
        self::get()->unreference($id);
    }

    public static function reference(string $id): void
    {
        self::get()->reference($id);
    }

    public static function run(): void
    {
        self::get()->run();
    }

    public static function stop(): void
    {
        self::get()->stop();
    }

    public static function isRunning(): bool
    {
        return self::get()->isRunning();
    }

    public static function now(): float
    {
        return (self::$driver ?? self::get())->now();
    }

    /**
     * Hands an error nobody else can handle (a job's uncaught exception, an unobserved async() failure)
     * to the error handler from a deferred callback, or without one throws it out of run().
     *
     * @internal
     */
    public static function reportError(\Throwable $error): void
    {
        $handler = self::$errorHandler;
        self::get()->defer($handler === null
            ? static fn() => throw $error
            : static function () use ($handler, $error): void {
                $handler($error);
            });
    }
}
