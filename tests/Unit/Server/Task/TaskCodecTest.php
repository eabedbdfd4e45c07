<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server\Task;

use Kiln\Server\Task\TaskCodec;
use Kiln\Server\Task\TaskFailedException;
use PHPUnit\Framework\TestCase;

final class TaskCodecTest extends TestCase
{
    public function testACallComesBackAsItWasSent(): void
    {
        $frame = TaskCodec::encodeCall([self::class, 'method'], [1, 'two', ['three' => 3.0], new \ArrayObject([4])]);
        [$task, $args] = TaskCodec::decodeCall($frame);

        self::assertSame([self::class, 'method'], $task);
        self::assertSame([1, 'two', ['three' => 3.0]], \array_slice($args, 0, 3));
        self::assertEquals(new \ArrayObject([4]), $args[3]);
    }

    /** @return iterable<string, array{mixed, string}> */
    public static function unsendable(): iterable
    {
        yield 'a closure' => [static fn() => 1, 'argument 1 cannot be sent to a task worker: it holds a Closure'];
        yield 'a resource' => [STDERR, 'argument 1 cannot be sent to a task worker: it holds a resource'];
        yield 'a closure deep in an array' => [['a' => [static fn() => 1]], "it holds a Closure (at key '0') (at key 'a')"];
        yield 'an object that refuses serialization' => [new \SplFileInfo(__FILE__), "the arguments cannot be serialized: Serialization of 'SplFileInfo' is not allowed"];
    }

    /** @dataProvider unsendable */
    public function testAnArgumentThatCannotBeSentIsAValueErrorNamingTheTask(mixed $argument, string $message): void
    {
        try {
            TaskCodec::encodeCall('resize', [$argument]);
            self::fail('no ValueError');
        } catch (\ValueError $e) {
            self::assertStringStartsWith('task(resize): ', $e->getMessage());
            self::assertStringContainsString($message, $e->getMessage());
        }
    }

    /** @return iterable<string, array{mixed}> */
    public static function malformedTasks(): iterable
    {
        yield 'an empty name' => [''];
        yield 'a name with a space' => ['re size'];
        yield 'a list of three' => [['A', 'b', 'c']];
        yield 'a method name that is no identifier' => [['A', 'b-c']];
        yield 'an object' => [new \stdClass()];
    }

    /** @dataProvider malformedTasks */
    public function testAMalformedTaskIsAValueError(mixed $task): void
    {
        $this->expectException(\ValueError::class);
        TaskCodec::label($task);
    }

    public function testAValueComesBackAndAFailureIsThrownWithWhatAndWhere(): void
    {
        self::assertSame(['ok' => true], TaskCodec::decodeOutcome(TaskCodec::encodeValue(['ok' => true]), 'x'));

        try {
            TaskCodec::decodeOutcome(TaskCodec::encodeFailure(new \DomainException('no')), 'resize');
            self::fail('no TaskFailedException');
        } catch (TaskFailedException $e) {
            self::assertSame('DomainException', $e->remoteClass);
            self::assertStringStartsWith('task(resize) failed: DomainException: no at ' . __FILE__ . ':', $e->getMessage());
        }
    }

    public function testAResultThatCannotBeSentBackBecomesAFailure(): void
    {
        $this->expectException(TaskFailedException::class);
        $this->expectExceptionMessage("the task's result cannot be sent back: it holds a Closure");
        TaskCodec::decodeOutcome(TaskCodec::encodeValue(static fn() => 1), 'make');
    }
}
