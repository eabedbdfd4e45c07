<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\Message;
use PHPUnit\Framework\TestCase;

final class MessageTest extends TestCase
{
    public function testLinesRoundTrip(): void
    {
        $line = (new Message(Message::BOOT_FAILED, "RuntimeException: no db\nat line 3"))->encode();
        self::assertSame("boot-failed RuntimeException: no db at line 3\n", $line);
        $decoded = Message::decode($line);
        self::assertNotNull($decoded);
        self::assertSame(Message::BOOT_FAILED, $decoded->type);
        self::assertSame('RuntimeException: no db at line 3', $decoded->argument);
    }

    public function testAPartialLineWaitsForItsEnd(): void
    {
        $buffer = "ready select\nserved 5 20";
        $messages = Message::drain($buffer);
        self::assertCount(1, $messages);
        self::assertSame('select', $messages[0]->argument);
        self::assertSame('served 5 20', $buffer);
        $buffer .= "97152\nnonsense here\nfirst-request\n";
        $messages = Message::drain($buffer);
        self::assertSame([Message::SERVED, Message::FIRST_REQUEST], array_map(static fn(Message $m) => $m->type, $messages));
        self::assertSame('5 2097152', $messages[0]->argument);
        self::assertSame('', $buffer);
    }
}
