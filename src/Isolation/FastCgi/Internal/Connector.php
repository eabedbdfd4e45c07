<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi\Internal;

use Kiln\Isolation\FastCgi\FastCgiAddress;
use Kiln\Isolation\FastCgi\FastCgiTimeoutException;
use Kiln\Isolation\FastCgi\FastCgiUnavailableException;
use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;

/**
 * Opens a connection without blocking the loop: asynchronous TCP connect (name resolution inside
 * stream_socket_client() does block: use addresses, not names, where that matters); a unix socket
 * connects at once or fails at once.
 *
 * @internal
 */
final class Connector
{
    private function __construct() {}

    /** @throws FastCgiUnavailableException|FastCgiTimeoutException|CancelledException */
    public static function connect(FastCgiAddress $address, float $timeout, ?Cancellation $cancellation, ?Timeouts $timeouts = null): Connection
    {
        $context = \stream_context_create($address->isUnix() ? [] : ['socket' => ['tcp_nodelay' => true]]);
        \error_clear_last();
        $stream = @\stream_socket_client($address->uri(), $errno, $errstr, null, \STREAM_CLIENT_CONNECT | \STREAM_CLIENT_ASYNC_CONNECT, $context);
        if ($stream === false) {
            $reason = $errstr !== '' ? $errstr : (\error_get_last()['message'] ?? 'unknown error');
            throw new FastCgiUnavailableException("Cannot connect to FastCGI responder {$address}: {$reason}");
        }
        \stream_set_blocking($stream, false);
        if ($address->isUnix()) {
            return new Connection($stream, $address->toString(), $timeouts);
        }
        try {
            if (!Await::stream($stream, true, $timeout, $cancellation)) {
                throw new FastCgiTimeoutException("Connecting to FastCGI responder {$address} timed out after {$timeout} s");
            }
        } catch (FastCgiTimeoutException | CancelledException $e) {
            \fclose($stream);
            throw $e;
        }
        if (@\stream_socket_get_name($stream, true) === false) {
            \fclose($stream);
            throw new FastCgiUnavailableException("Cannot connect to FastCGI responder {$address}: connection refused or unreachable");
        }

        return new Connection($stream, $address->toString(), $timeouts);
    }
}
