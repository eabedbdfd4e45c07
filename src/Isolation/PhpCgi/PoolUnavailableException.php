<?php

declare(strict_types=1);

namespace Kiln\Isolation\PhpCgi;

/** No child can run: every one failed to start and the supervisor is backing off. Answer 502. */
final class PoolUnavailableException extends PhpCgiException {}
