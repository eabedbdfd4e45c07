<?php

declare(strict_types=1);

namespace Kiln\Redis;

/**
 * No reply came within the command timeout. The connection is closed (replies are matched in order,
 * so a late one could not be told apart), and the command may or may not have run.
 */
final class CommandTimeoutException extends RedisException {}
