<?php

declare(strict_types=1);

namespace Kiln\Loop;

/** A child process could not be started, or its pipes failed. */
final class ProcessException extends LoopException {}
