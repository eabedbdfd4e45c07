<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * The error log of the worker this process is, for code that outlives a request but has no WorkerContext
 * at hand (script runners logging a backend's stderr). Outside a worker, lines go to STDERR.
 */
final class WorkerLog
{
    /** @var (\Closure(string, string): void)|null */
    private static ?\Closure $sink = null;

    /**
     * @internal the worker installs its log after fork
     * @param \Closure(string, string): void $sink (level, message)
     */
    public static function install(\Closure $sink): void
    {
        self::$sink = $sink;
    }

    /** @param string $level one of the LogLevel names: debug, info, notice, warning, error */
    public static function write(string $level, string $message): void
    {
        if (self::$sink !== null) {
            (self::$sink)($level, $message);
            return;
        }
        @fwrite(STDERR, "[$level] $message\n");
    }
}
