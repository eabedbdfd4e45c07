<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Loop\StreamPoll;

/**
 * For the exit path (FatalGuard): the requests that reached a worker but never started, and which of them their
 * client sends again on its own if the connection closes unanswered.
 *
 * A client resends a request on a new connection when a connection it reused closed before any byte of the answer
 * (RFC 9112 §9.3.1), and only one whose method may be sent twice (RFC 9110 §9.2.2): browsers and curl do; nginx and
 * HAProxy do when set up to. So a close is the better answer only on a kept-alive connection that has served a
 * request, for such a method, when nothing of the answer went out (not even a `100 Continue`), and when the
 * client's new connection reaches a live worker (a shared listener). Every other such request gets a 503. A client that
 * does not resend by itself sees the close as an error, as it sees a kept-alive connection its server timed out.
 *
 * @internal
 */
final class UnstartedRequests
{
    /** The methods a client may send twice (RFC 9110 §9.2.2). */
    private const RESENDABLE = ['GET' => true, 'HEAD' => true, 'OPTIONS' => true, 'TRACE' => true, 'PUT' => true, 'DELETE' => true];

    private function __construct() {}

    /**
     * The connections (by index) holding a request that was never started, with its method (null when not yet known):
     * part of it parsed already, or bytes of it in the socket now, or, on one that has served nothing yet, within
     * $wait seconds.
     *
     * @param list<Connection> $connections
     * @return array<int, string|null>
     */
    public static function find(array $connections, float $wait): array
    {
        $waiting = [];
        $sockets = [];
        foreach ($connections as $i => $connection) {
            if ($connection->isQueued() || $connection->isWaitingForHead() || $connection->isReadingBody() || $connection->hasBufferedRequest()) {
                $waiting[$i] = $connection->waitingMethod();
            } else {
                $sockets[$i] = $connection->socket;
            }
        }
        $until = microtime(true) + $wait;
        // poll(2): a worker of many connections has descriptors past stream_select()'s 1024, and one such makes
        // stream_select() fail for all of them.
        $poll = new StreamPoll();
        while ($sockets !== []) {
            $ready = $poll->wait($sockets, [], max(0.0, $until - microtime(true)));
            if ($ready === null) {
                break;
            }
            foreach ($ready[0] as $i) {
                $peek = @stream_socket_recvfrom($sockets[$i], 32, STREAM_PEEK);
                unset($sockets[$i]);
                if (\is_string($peek) && $peek !== '') {
                    $waiting[$i] = self::method($peek);
                }
            }
            // Only a connection that has served nothing yet is waited for; the others were looked at once.
            foreach ($sockets as $i => $socket) {
                if ($connections[$i]->served > 0) {
                    unset($sockets[$i]);
                }
            }
        }
        return $waiting;
    }

    /** Whether the client sends the request waiting on $connection again by itself, if the connection closes now. */
    public static function resentOnClose(Connection $connection, ?string $method, bool $sharedListener): bool
    {
        return $sharedListener && $connection->served > 0 && $method !== null && isset(self::RESENDABLE[$method])
            && !$connection->sentContinue();
    }

    /** The method a request's first bytes name (after the empty lines a client may send first), or null if not all there. */
    public static function method(string $bytes): ?string
    {
        $start = ltrim($bytes, "\r\n");
        $space = strpos($start, ' ');
        return $space === false ? null : substr($start, 0, $space);
    }
}
