<?php

declare(strict_types=1);

// Real-time example: WebSocket echo and rooms, server-sent events, and publishing from a plain POST;
// sessions, counters and a cache shared by the node's workers.
// Run: bin/kiln serve examples/realtime/app.php --workers=2, then open http://127.0.0.1:8080/ in two windows.
// docs/realtime.md describes the API; tests/Integration/Realtime/ExampleAppTest.php drives this file.

use Kiln\App\App;
use Kiln\App\HttpErrorException;
use Kiln\App\Session;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\WebSocket\Connection;
use Kiln\Http\WebSocket\Message;
use Kiln\Http\WebSocket\WebSocketHandler;

$app = new App();

$page = (string) file_get_contents(__DIR__ . '/page.html');
$app->get('/', fn() => new Response(200, ['Content-Type' => 'text/html; charset=utf-8'], $page));

// Echo: text comes back as text, binary as binary.
$app->ws('/ws/echo', function (Connection $connection, Message $message): void {
    $message->binary ? $connection->sendBinary($message->payload) : $connection->send($message->payload);
});

// Rooms: every text message a member sends reaches every member of the room, the sender included, on
// whichever worker of the node each one is connected.
$app->ws('/ws/rooms/{room:[A-Za-z0-9_.-]{1,64}}', new class ($app) implements WebSocketHandler {
    public function __construct(private readonly App $app) {}

    public function onOpen(Connection $connection, Request $request): void
    {
        /** @var array{room: string} $params */
        $params = $request->attribute(App::ROUTE_PARAMS);
        $connection->setAttribute('room', $params['room']);
        $connection->join($params['room']);
    }

    public function onMessage(Connection $connection, Message $message): void
    {
        if ($message->binary) {
            $connection->close(1003, 'this room takes text');
            return;
        }
        $room = $connection->attribute('room');
        \assert(\is_string($room));
        $this->app->broadcast($room, $message->payload);
    }

    public function onClose(Connection $connection, int $code, string $reason): void {}
});

// Server-sent events: the stream of what is published to {topic}, each event with an id, so a client
// that reconnects with Last-Event-ID gets what it missed (from a bounded buffer).
$app->sse('/events/{topic:[A-Za-z0-9_.-]{1,64}}');

// The body is published to the topic (SSE) and to the room of the same name (WebSocket).
$app->post('/publish/{topic:[A-Za-z0-9_.-]{1,64}}', function (Request $request, string $topic) use ($app): array {
    $body = $request->body();
    if (preg_match('//u', $body) !== 1) {
        throw new HttpErrorException(400, 'The body must be UTF-8 text');
    }
    $id = $app->publish($topic, $body);
    $app->broadcast($topic, $body);
    return ['topic' => $topic, 'id' => $id];
});

// Shared state (docs/state.md): every worker of the node sees the same sessions, counters and cache.
$app->sessions();

// Counts this browser's visits in its session (the cookie PHPSESSID), and says which node answered.
$app->get('/session/visits', function (Session $session) use ($app): array {
    $visits = (int) $session->get('visits', 0) + 1;
    $session->set('visits', $visits);
    return ['visits' => $visits, 'node' => $app->nodeId()];
});

// An atomic counter per name: concurrent POSTs on any worker never count twice or lose one.
$app->post('/counter/{name:[A-Za-z0-9_.-]{1,64}}', fn(string $name): array => ['value' => $app->counter($name)->increment()]);

// The body is cached under {key} until replaced; GET answers it, or 404.
$app->put('/cache/{key:[A-Za-z0-9_.-]{1,128}}', function (Request $request, string $key) use ($app): Response {
    try {
        $app->cache()->set($key, $request->body());
    } catch (\ValueError $e) {
        throw new HttpErrorException(413, $e->getMessage());
    }
    return new Response(204);
});
$app->get('/cache/{key:[A-Za-z0-9_.-]{1,128}}', function (string $key) use ($app): Response {
    $value = $app->cache()->get($key);
    return \is_string($value) ? Response::text($value) : throw new HttpErrorException(404, "Nothing cached under '$key'");
});

return $app;
