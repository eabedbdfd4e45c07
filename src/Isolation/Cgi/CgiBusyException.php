<?php

declare(strict_types=1);

namespace Kiln\Isolation\Cgi;

use Kiln\Isolation\IsolationException;

/** All the CGI slots are in use: the caller answers 503 with Retry-After. */
final class CgiBusyException extends IsolationException {}
