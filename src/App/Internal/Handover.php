<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\Http\RequestHandler;

/**
 * @internal
 *
 * How a worker gets the handler out of an app script (App::load()): the script returns it, or calls
 * `$app->run()`, which hands the App over here while the worker is loading it.
 */
final class Handover
{
    private static ?RequestHandler $handedOver = null;

    private static bool $loading = false;

    /** Takes $handler when a worker is loading the script; false when the script runs on its own (`php app.php`). */
    public static function offer(RequestHandler $handler): bool
    {
        if (!self::$loading) {
            return false;
        }
        self::$handedOver = $handler;
        return true;
    }

    public static function load(string $script): RequestHandler
    {
        self::$loading = true;
        self::$handedOver = null;
        try {
            $result = (static fn(string $__file): mixed => require $__file)($script);
        } finally {
            self::$loading = false;
        }
        $handler = $result instanceof RequestHandler ? $result : self::$handedOver;
        self::$handedOver = null;
        if ($handler === null) {
            throw new \Error("$script must return an App (`return \$app;`) or call `\$app->run()`");
        }
        return $handler;
    }
}
