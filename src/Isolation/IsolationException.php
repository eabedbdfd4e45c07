<?php

declare(strict_types=1);

namespace Kiln\Isolation;

/** Base of every runtime failure in the Isolation layer (backend down, malformed backend output, timeout). */
class IsolationException extends \Exception {}
