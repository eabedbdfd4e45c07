<?php

declare(strict_types=1);

namespace Kiln\Isolation\Cgi;

use Kiln\Isolation\IsolationException;

/** The CGI process could not be started (proc_open failed): the caller answers 502. */
final class CgiStartException extends IsolationException {}
