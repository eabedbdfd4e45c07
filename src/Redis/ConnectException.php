<?php

declare(strict_types=1);

namespace Kiln\Redis;

/**
 * No connection to Redis could be made (refused, timed out, TLS or AUTH failed), or the client is
 * waiting out its backoff after such a failure. The command was not sent.
 */
final class ConnectException extends RedisException {}
