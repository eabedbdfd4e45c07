<?php

declare(strict_types=1);

use Kiln\App\App;
use Kiln\App\Context;
use Kiln\Http\Request;
use Kiln\Http\Sse\EventStream;
use Kiln\Http\WebSocket\Connection;
use Kiln\Http\WebSocket\Message;

// Room members and SSE streams next to classic scripts of the sequential and isolated tiers that publish to them.
$app = new App();

// A member says first which worker holds it, then receives what the room gets.
$app->ws('/ws/rooms/{room}', static function (Connection $connection, Message $message): void {}, onOpen: static function (Connection $connection, Request $request): void {
    /** @var array{room: string} $params */
    $params = $request->attribute(App::ROUTE_PARAMS);
    $connection->join($params['room']);
    $connection->send('worker ' . getmypid());
});

$app->sse('/events/{topic}', static function (EventStream $stream, Context $context) use ($app): void {
    $stream->comment('worker ' . getmypid());
    $app->hub()->subscribe((string) $context->param('topic'), $stream);
});

$app->site(__DIR__ . '/public', ['/iso/' => 'isolated'], 'sequential');

return $app;
