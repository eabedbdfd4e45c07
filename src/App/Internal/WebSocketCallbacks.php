<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\Http\Request;
use Kiln\Http\WebSocket\Connection;
use Kiln\Http\WebSocket\Message;
use Kiln\Http\WebSocket\WebSocketHandler;

/**
 * A WebSocket handler made of closures (`$app->ws($path, $onMessage, onOpen: …, onClose: …)`).
 *
 * @internal
 */
final class WebSocketCallbacks implements WebSocketHandler
{
    /**
     * @param \Closure(Connection, Message): mixed $onMessage
     * @param (\Closure(Connection, Request): mixed)|null $onOpen
     * @param (\Closure(Connection, int, string): mixed)|null $onClose
     */
    public function __construct(
        private readonly \Closure $onMessage,
        private readonly ?\Closure $onOpen = null,
        private readonly ?\Closure $onClose = null,
    ) {}

    public function onOpen(Connection $connection, Request $request): void
    {
        if ($this->onOpen !== null) {
            ($this->onOpen)($connection, $request);
        }
    }

    public function onMessage(Connection $connection, Message $message): void
    {
        ($this->onMessage)($connection, $message);
    }

    public function onClose(Connection $connection, int $code, string $reason): void
    {
        if ($this->onClose !== null) {
            ($this->onClose)($connection, $code, $reason);
        }
    }
}
