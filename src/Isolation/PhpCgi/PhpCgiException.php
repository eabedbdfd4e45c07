<?php

declare(strict_types=1);

namespace Kiln\Isolation\PhpCgi;

use Kiln\Isolation\IsolationException;

/** The php-cgi pool could not take a request. */
abstract class PhpCgiException extends IsolationException {}
