<?php

declare(strict_types=1);

namespace Kiln\Isolation\Fork;

use Kiln\Isolation\IsolationException;

/** A malformed SCGI request reached the fork server (it answers 400 and closes). */
final class ScgiException extends IsolationException {}
