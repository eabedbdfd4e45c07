<?php

declare(strict_types=1);

use Kiln\App\App;
use Kiln\App\HttpErrorException;
use Kiln\App\Middleware;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Http\WebSocket\Connection;
use Kiln\Http\WebSocket\Message;
use Kiln\Http\WebSocket\WebSocketHandler;

use function Kiln\Loop\delay;

$app = new App();

// Runs before every upgrade: refuses ?deny=1 and leaves a mark onOpen reports.
$app->middleware(new class implements Middleware {
    public function process(Request $request, RequestHandler $next): Response
    {
        if ($request->query()['deny'] ?? null) {
            throw new HttpErrorException(401, 'denied by middleware');
        }
        $request->setAttribute('middleware', 'ran');
        return $next->handle($request);
    }
});

$app->get('/', fn() => 'plain page');

$app->get('/pid', fn() => (string) getmypid());

// Text as text, binary as binary; "pid" answers with the worker's pid.
$app->ws('/ws/echo', function (Connection $connection, Message $message): void {
    if (!$message->binary && $message->payload === '!pid') {
        $connection->send((string) getmypid());
        return;
    }
    $message->binary ? $connection->sendBinary($message->payload) : $connection->send($message->payload);
});

// What onOpen sees of the request, as the first message; room "closed" is refused with 409. A member's
// message goes to every member of the room, on every worker.
$app->ws('/ws/rooms/{room}', new class ($app) implements WebSocketHandler {
    public function __construct(private readonly App $app) {}

    public function onOpen(Connection $connection, Request $request): void
    {
        /** @var array<string, string> $params */
        $params = $request->attribute(App::ROUTE_PARAMS, []);
        if ($params['room'] === 'closed') {
            throw new HttpErrorException(409, 'this room is closed');
        }
        $connection->setAttribute('room', $params['room']);
        $connection->join($params['room']);
        $connection->send(json_encode([
            'room' => $params['room'],
            'cookie' => $request->cookie('user'),
            'header' => $request->header('x-test'),
            'middleware' => $request->attribute('middleware'),
            'subprotocol' => $connection->subprotocol(),
            'id' => $connection->id(),
            'pid' => getmypid(),
        ], JSON_THROW_ON_ERROR));
    }

    public function onMessage(Connection $connection, Message $message): void
    {
        $room = (string) $connection->attribute('room');
        $this->app->broadcast($room, "$room: {$message->payload}");
    }

    public function onClose(Connection $connection, int $code, string $reason): void {}
}, subprotocols: ['chat.v2', 'chat.v1']);

// Every message a member sends goes to every member of this worker (the slow-consumer test).
$members = new ArrayObject();
$app->ws(
    '/ws/feed',
    function (Connection $connection, Message $message) use ($members): void {
        foreach ($members as $member) {
            \assert($member instanceof Connection);
            $member->send($message->payload);
        }
    },
    onOpen: function (Connection $connection) use ($members): void {
        $members[$connection->id()] = $connection;
    },
    onClose: function (Connection $connection, int $code, string $reason) use ($members): void {
        unset($members[$connection->id()]);
        \Kiln\Server\WorkerLog::write('info', "feed member closed with $code ($reason)");
    },
);

// onOpen looks something up (a short wait) before it joins its room (the client-gone-during-onOpen test).
$app->ws(
    '/ws/slow-open/{room}',
    function (Connection $connection, Message $message): void {},
    onOpen: function (Connection $connection, Request $request): void {
        /** @var array<string, string> $params */
        $params = $request->attribute(App::ROUTE_PARAMS, []);
        \Kiln\Server\WorkerLog::write('info', "slow-open {$params['room']}: onOpen waits");
        delay(0.5);
        $connection->setAttribute('room', $params['room']);
        $connection->join($params['room']);
    },
    onClose: function (Connection $connection, int $code, string $reason): void {
        \Kiln\Server\WorkerLog::write('info', "slow-open {$connection->attribute('room')} closed with $code");
    },
);

$app->get('/members/{room}', fn(string $room) => (string) $app->hub()->members($room));

// A handler that suspends: answers each message after a short delay, in order.
$app->ws('/ws/slow-echo', function (Connection $connection, Message $message): void {
    delay(0.01 * random_int(0, 3));
    $connection->send($message->payload);
});

return $app;
