<?php

declare(strict_types=1);

namespace Kiln\Http\Realtime;

use Kiln\Http\Sse\EventEncoder;
use Kiln\Store\BusException;
use Kiln\Store\Publish;

/**
 * Publishing to SSE topics and WebSocket rooms from a classic PHP script, the same call on every tier:
 *
 *     require_once '/path/to/kiln/src/bootstrap.php';
 *     \Kiln\Http\Realtime\ScriptPublisher::event('comments', json_encode($comment), 'comment');
 *     \Kiln\Http\Realtime\ScriptPublisher::broadcast('dashboard', 'new comment');
 *
 * The message goes through the node bus (Publish::to(): in the worker, or through its gateway socket from a
 * php-cgi or forked child). An event is numbered by the worker that takes it from the script (its App's Hub
 * gives it the topic's next node-wide id), so it replays like any other. Both throw BusException when the
 * message was not published, and \ValueError for an event name with CR or LF.
 */
final class ScriptPublisher
{
    /** The channel on which a script hands an event to its worker's Hub (NumberingBus). */
    public const EVENTS = 'kiln.sse-publish:';

    /** @throws BusException */
    public static function event(string $topic, string $data, ?string $event = null): void
    {
        EventEncoder::event('', $event); // refuses a bad name here, in the script
        Publish::to(self::EVENTS . $topic, ($event ?? '') . "\n" . $data);
    }

    /** @throws BusException */
    public static function broadcast(string $room, string $message): void
    {
        Publish::to(Hub::ROOM . $room, $message);
    }
}
