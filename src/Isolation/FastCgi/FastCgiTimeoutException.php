<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/**
 * The responder did not accept the connection, take the request, or send anything for longer than the
 * configured limits (FastCgiOptions). The connection has been closed. The caller answers 504 Gateway
 * Timeout; a pool that owns the responder process should kill it.
 */
final class FastCgiTimeoutException extends FastCgiException {}
