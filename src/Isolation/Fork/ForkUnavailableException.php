<?php

declare(strict_types=1);

namespace Kiln\Isolation\Fork;

use Kiln\Isolation\IsolationException;

/** The fork server could not be started or reached: the caller answers 502. */
final class ForkUnavailableException extends IsolationException {}
