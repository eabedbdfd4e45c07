<?php

declare(strict_types=1);

use Kiln\App\App;
use Kiln\App\Context;
use Kiln\App\HttpErrorException;
use Kiln\Http\Request;
use Kiln\Http\Sse\EventStream;

$app = new App();

// Each stream says first which worker holds it, then follows its topic.
$app->sse('/events/{topic}', static function (EventStream $stream, Context $context) use ($app): void {
    $stream->comment('worker ' . getmypid());
    $app->hub()->subscribe((string) $context->param('topic'), $stream);
});

// The plain form: the route's {topic}, nothing else.
$app->sse('/plain/{topic}');

// One stream on two topics, as docs/realtime.md's example: each topic numbers its events on its own.
$app->sse('/live/{account}', static function (EventStream $stream, Context $context) use ($app): void {
    $app->hub()->subscribe('account-' . $context->param('account'), $stream);
    $app->hub()->subscribe('announcements', $stream);
});

$app->sse('/private/{topic}', static function (): never {
    throw new HttpErrorException(403, 'not for you');
});

$app->post('/publish/{topic}', static function (Request $request, string $topic) use ($app): array {
    $event = $request->query()['event'] ?? null;
    return ['id' => $app->publish($topic, $request->body(), \is_string($event) ? $event : null), 'pid' => getmypid()];
});

$app->get('/subscribers/{topic}', static fn(string $topic): array => [
    'pid' => getmypid(),
    'subscribers' => $app->hub()->subscribers($topic),
]);

// Classic scripts next to the routes (public/publish.php publishes through a Hub of its own; event.php, iso/event.php
// and fork/event.php through ScriptPublisher from each tier; exit.php ends its worker).
$app->site(__DIR__ . '/public', ['/iso/' => 'isolated', '/fork/' => 'fork'], 'sequential');

return $app;
