<?php

declare(strict_types=1);

namespace Kiln\Loop;

/** An operation was given up because its Cancellation was requested; getPrevious() holds the reason. */
class CancelledException extends LoopException {}
