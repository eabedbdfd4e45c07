<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * One line on the channel between a worker and the supervisor. Worker → supervisor: `ready`,
 * `boot-failed <reason>`, `first-request`, `served <count> <memory-bytes> [<name>=<count> ...]`, `recycle <reason>`,
 * `stopping <reason>`, `metrics <Registry::export() as JSON>` (once a second with --admin-listen), `sidecar-open <SidecarSpec JSON>`, `sidecar-replace <name> <index> <pid> <0|1 kill> <reason>`,
 * `alive` (the heartbeat with --stall-timeout, docs/design/028: at least once a second, from a timer and as requests finish).
 * Supervisor → worker (sidecars only; lifecycle is told with signals): `sidecar-up <name> <index> <pid> <socket>`,
 * `sidecar-down <name> <index> <retry-in-seconds> <reason>`.
 */
final class Message
{
    public const READY = 'ready';
    public const BOOT_FAILED = 'boot-failed';
    public const FIRST_REQUEST = 'first-request';
    public const SERVED = 'served';
    public const RECYCLE = 'recycle';
    public const STOPPING = 'stopping';
    public const SIDECAR_OPEN = 'sidecar-open';
    public const SIDECAR_REPLACE = 'sidecar-replace';
    public const SIDECAR_UP = 'sidecar-up';
    public const SIDECAR_DOWN = 'sidecar-down';
    public const METRICS = 'metrics';
    public const ALIVE = 'alive';

    private const TYPES = [self::READY, self::BOOT_FAILED, self::FIRST_REQUEST, self::SERVED, self::RECYCLE, self::STOPPING,
        self::SIDECAR_OPEN, self::SIDECAR_REPLACE, self::SIDECAR_UP, self::SIDECAR_DOWN, self::METRICS, self::ALIVE];

    public function __construct(
        public readonly string $type,
        public readonly string $argument = '',
    ) {}

    public function encode(): string
    {
        $argument = str_replace(["\r", "\n"], ' ', $this->argument);
        return $argument === '' ? $this->type . "\n" : $this->type . ' ' . $argument . "\n";
    }

    /** Null for a line this supervisor does not understand (ignored, never fatal). */
    public static function decode(string $line): ?self
    {
        $line = rtrim($line, "\r\n");
        $space = strpos($line, ' ');
        $type = $space === false ? $line : substr($line, 0, $space);
        if (!\in_array($type, self::TYPES, true)) {
            return null;
        }
        return new self($type, $space === false ? '' : substr($line, $space + 1));
    }

    /**
     * Splits a read buffer into whole lines; the incomplete tail stays in $buffer.
     *
     * @return list<self>
     */
    public static function drain(string &$buffer): array
    {
        $messages = [];
        while (($end = strpos($buffer, "\n")) !== false) {
            $message = self::decode(substr($buffer, 0, $end));
            $buffer = substr($buffer, $end + 1);
            if ($message !== null) {
                $messages[] = $message;
            }
        }
        return $messages;
    }
}
