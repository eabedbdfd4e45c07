<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * One line on a worker's channel to the supervisor (worker → supervisor only; the supervisor talks
 * back with signals). Lines: `ready`, `boot-failed <reason>`, `first-request`,
 * `served <count> <memory-bytes>`, `recycle <reason>`, `stopping <reason>`.
 */
final class Message
{
    public const READY = 'ready';
    public const BOOT_FAILED = 'boot-failed';
    public const FIRST_REQUEST = 'first-request';
    public const SERVED = 'served';
    public const RECYCLE = 'recycle';
    public const STOPPING = 'stopping';

    private const TYPES = [self::READY, self::BOOT_FAILED, self::FIRST_REQUEST, self::SERVED, self::RECYCLE, self::STOPPING];

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
