<?php

declare(strict_types=1);

namespace Kiln\Redis;

/** The bytes from the server are not RESP, or break a limit of the parser (nesting, size). */
final class ProtocolException extends RedisException {}
