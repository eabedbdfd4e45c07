<?php

declare(strict_types=1);

namespace Kiln\Isolation\Cgi;

use Kiln\Isolation\IsolationException;

/**
 * A CGI response (from a CGI script, php-cgi, php-fpm) is not acceptable: malformed header block, header
 * block too large, or output ended before the header block did. The caller answers 502 Bad Gateway.
 */
final class CgiResponseException extends IsolationException {}
