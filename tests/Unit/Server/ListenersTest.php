<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\ListenAddress;
use Kiln\Server\Listeners;
use PHPUnit\Framework\TestCase;

final class ListenersTest extends TestCase
{
    public function testAcceptedConnectionsSendSmallWritesAtOnce(): void
    {
        [$listener] = Listeners::bind(ListenAddress::parse('127.0.0.1:0'), false);
        $client = stream_socket_client('tcp://' . stream_socket_get_name($listener, false), $errno, $error, 2.0);
        self::assertNotFalse($client, $error);
        $accepted = stream_socket_accept($listener, 2.0);
        self::assertNotFalse($accepted);
        $socket = socket_import_stream($accepted);
        self::assertNotFalse($socket);
        self::assertSame(1, socket_get_option($socket, SOL_TCP, TCP_NODELAY), 'Nagle is off: no 40 ms wait between the pieces of a streamed body');
        fclose($client);
        fclose($accepted);
        fclose($listener);
    }
}
