<?php

declare(strict_types=1);

namespace Kiln\Http\Client;

use Kiln\Http\HttpException;

/**
 * A request failed at runtime: connect refused, TLS failure, peer reset, malformed or oversized response.
 * Timeouts and cancellations are not wrapped: they surface as Kiln\Loop\TimeoutException / CancelledException.
 */
final class ClientException extends HttpException {}
