<?php

declare(strict_types=1);

namespace Kiln\Redis;

/** A Redis server or the way to it failed; the layer's runtime failure base. */
class RedisException extends \RuntimeException {}
