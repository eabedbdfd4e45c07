<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

use Kiln\Isolation\IsolationException;

/**
 * A FastCGI exchange failed: the responder closed the connection or broke the protocol in the middle of a
 * response, or answered with an END_REQUEST that is not "request complete". The subclasses say more.
 */
class FastCgiException extends IsolationException {}
