<?php

declare(strict_types=1);

namespace Kiln\Server\Task;

/**
 * What travels in the task frames, as PHP's serialize(): the call (the task and its arguments) and the
 * outcome (a value, or what the task threw). The socket is private to the node (a 0700 directory of the
 * supervisor's), so both ends trust what they unserialize.
 *
 * A task is a name registered on the app (`'resize'`) or a method `[Images::class, 'resize']`.
 */
final class TaskCodec
{
    /**
     * @param string|array<mixed> $task
     * @param list<mixed> $args
     * @throws \ValueError for a malformed task, or an argument that cannot be serialized (a closure, a resource…)
     */
    public static function encodeCall(string|array $task, array $args): string
    {
        $label = self::label($task);
        foreach ($args as $i => $arg) {
            $where = self::unserializable($arg);
            if ($where !== null) {
                throw new \ValueError("task($label): argument " . ($i + 1) . " cannot be sent to a task worker: it holds $where");
            }
        }
        try {
            return serialize([$task, $args]);
        } catch (\Throwable $e) {
            throw new \ValueError("task($label): the arguments cannot be serialized: {$e->getMessage()}", 0, $e);
        }
    }

    /** @return array{string|array{string, string}, list<mixed>} */
    public static function decodeCall(string $frame): array
    {
        $call = @unserialize($frame);
        if (!\is_array($call) || !isset($call[0], $call[1]) || !\is_array($call[1])) {
            throw new TaskException('A malformed task call');
        }
        $task = $call[0];
        self::label($task);
        /** @var string|array{string, string} $task */
        return [$task, array_values($call[1])];
    }

    public static function encodeValue(mixed $value): string
    {
        $where = self::unserializable($value);
        if ($where !== null) {
            return self::encodeFailure(new \ValueError("the task's result cannot be sent back: it holds $where"));
        }
        try {
            return serialize(['ok', $value]);
        } catch (\Throwable $e) {
            return self::encodeFailure(new \ValueError("the task's result cannot be serialized: {$e->getMessage()}", 0, $e));
        }
    }

    public static function encodeFailure(\Throwable $error): string
    {
        return serialize(['error', $error::class, $error->getMessage(), $error->getFile() . ':' . $error->getLine()]);
    }

    /** @throws TaskFailedException when the task threw */
    public static function decodeOutcome(string $frame, string $label): mixed
    {
        $outcome = @unserialize($frame);
        if (!\is_array($outcome) || !isset($outcome[0])) {
            throw new TaskFailedException("task($label): a malformed answer from the task worker");
        }
        if ($outcome[0] === 'ok') {
            return $outcome[1] ?? null;
        }
        $class = \is_string($outcome[1] ?? null) ? $outcome[1] : 'Throwable';
        $message = \is_string($outcome[2] ?? null) ? $outcome[2] : '';
        $where = \is_string($outcome[3] ?? null) ? $outcome[3] : '';
        throw new TaskFailedException("task($label) failed: $class: $message" . ($where === '' ? '' : " at $where"), $class, $where);
    }

    /** `resize`, `App\Images::resize`; \ValueError for anything else */
    public static function label(mixed $task): string
    {
        if (\is_string($task) && preg_match('/^[A-Za-z0-9._:-]{1,128}$/D', $task) === 1) {
            return $task;
        }
        if (\is_array($task) && array_is_list($task) && \count($task) === 2 && \is_string($task[0]) && \is_string($task[1])
            && preg_match('/^\\\\?[A-Za-z_][A-Za-z0-9_\\\\]*$/D', $task[0]) === 1 && preg_match('/^[A-Za-z_][A-Za-z0-9_]*$/D', $task[1]) === 1) {
            return ltrim($task[0], '\\') . '::' . $task[1];
        }
        throw new \ValueError('A task is a name registered with $app->task() or [SomeClass::class, \'method\'], got ' . get_debug_type($task));
    }

    /** Where in $value something is that serialize() would refuse or silently lose; null: nothing. */
    private static function unserializable(mixed $value, int $depth = 0): ?string
    {
        if (\is_resource($value) || get_debug_type($value) === 'resource (closed)') {
            return 'a resource';
        }
        if ($value instanceof \Closure || $value instanceof \Generator || $value instanceof \Fiber) {
            return 'a ' . $value::class;
        }
        if (\is_array($value) && $depth < 32) {
            foreach ($value as $key => $item) {
                $inner = self::unserializable($item, $depth + 1);
                if ($inner !== null) {
                    return "$inner (at key '$key')";
                }
            }
        }
        return null;
    }
}
