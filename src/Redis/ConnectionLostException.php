<?php

declare(strict_types=1);

namespace Kiln\Redis;

/**
 * The connection broke while the command was in flight: it may or may not have run on the server.
 * It is never sent again behind the caller's back (an INCR must not count twice); retry only what is
 * safe to repeat.
 */
final class ConnectionLostException extends RedisException {}
