<?php

declare(strict_types=1);

namespace Kiln\Isolation\Cgi;

use Kiln\Isolation\IsolationException;

/** The CGI process ran past its time limit and was killed: the caller answers 504 (or aborts a response already started). */
final class CgiTimeoutException extends IsolationException {}
