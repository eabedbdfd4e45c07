<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * The error log: `[2026-11-22T00:36:48.123Z] [info] [supervisor 1234] message`, one fwrite per line; with
 * $json, one object per line instead: `{"time":"2026-11-22T00:36:48.123Z","level":"info","source":"supervisor",
 * "pid":1234,"message":"..."}` (--error-log-format=json). The source label changes once, in a worker right
 * after fork (identify()).
 */
final class Log
{
    private string $source = 'supervisor';

    public function __construct(
        private readonly LogFile $file,
        private readonly LogLevel $threshold = LogLevel::Info,
        private readonly bool $json = false,
    ) {}

    public function identify(string $source): void
    {
        $this->source = $source;
    }

    public function file(): LogFile
    {
        return $this->file;
    }

    public function enabled(LogLevel $level): bool
    {
        return $level->severity() >= $this->threshold->severity();
    }

    public function log(string $level, string $message): void
    {
        $parsed = LogLevel::tryFrom($level) ?? LogLevel::Error;
        if ($this->enabled($parsed)) {
            $this->write($this->source, (int) getmypid(), $parsed, $message);
        }
    }

    /**
     * An entry on behalf of another process: what a worker wrote to its standard error, filed by the supervisor
     * whatever the threshold (--log-level is for Kiln's own messages; PHP's error_reporting chose what PHP wrote).
     */
    public function logAs(string $source, int $pid, string $level, string $message): void
    {
        $this->write($source, $pid, LogLevel::tryFrom($level) ?? LogLevel::Error, $message);
    }

    private function write(string $source, int $pid, LogLevel $level, string $message): void
    {
        $this->file->write($this->json
            ? self::formatJson(microtime(true), $level, $source, $pid, $message)
            : self::format(microtime(true), $level, $source . ' ' . $pid, $message));
    }

    public static function format(float $time, LogLevel $level, string $source, string $message): string
    {
        $ms = (int) round($time * 1000);
        $stamp = gmdate('Y-m-d\TH:i:s', intdiv($ms, 1000)) . sprintf('.%03dZ', $ms % 1000);
        // One entry is one line: a multi-line message (a stack trace) is folded so lines stay whole.
        $message = str_replace(["\r\n", "\n", "\r"], ' | ', rtrim($message));
        return "[$stamp] [{$level->value}] [$source] $message\n";
    }

    public static function formatJson(float $time, LogLevel $level, string $source, int $pid, string $message): string
    {
        $ms = (int) round($time * 1000);
        return json_encode([
            'time' => gmdate('Y-m-d\TH:i:s', intdiv($ms, 1000)) . sprintf('.%03dZ', $ms % 1000),
            'level' => $level->value,
            'source' => $source,
            'pid' => $pid,
            'message' => rtrim($message),
        ], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE) . "\n";
    }

    public function debug(string $message): void
    {
        $this->log('debug', $message);
    }

    public function info(string $message): void
    {
        $this->log('info', $message);
    }

    public function warning(string $message): void
    {
        $this->log('warning', $message);
    }

    public function error(string $message): void
    {
        $this->log('error', $message);
    }

    public function reopen(): void
    {
        $this->file->reopen();
    }
}
