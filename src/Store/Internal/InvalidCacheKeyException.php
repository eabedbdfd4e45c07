<?php

declare(strict_types=1);

namespace Kiln\Store\Internal;

use Psr\SimpleCache\InvalidArgumentException;

/**
 * A key PSR-16 does not allow (Psr16Cache): PSR-16 names this failure an exception of its own.
 *
 * @internal
 */
final class InvalidCacheKeyException extends \InvalidArgumentException implements InvalidArgumentException {}
