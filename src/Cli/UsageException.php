<?php

declare(strict_types=1);

namespace Kiln\Cli;

/** The command line was wrong (unknown option, bad value, missing PATH): exit code 2, one line. */
final class UsageException extends \Exception {}
