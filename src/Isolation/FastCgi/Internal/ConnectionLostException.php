<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi\Internal;

use Kiln\Isolation\FastCgi\FastCgiException;

/**
 * The connection failed or was closed by the responder. Never leaves the client: it becomes
 * FastCgiUnavailableException (nothing answered yet) or FastCgiException (mid-response).
 *
 * @internal
 */
final class ConnectionLostException extends FastCgiException {}
