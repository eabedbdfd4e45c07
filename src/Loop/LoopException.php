<?php

declare(strict_types=1);

namespace Kiln\Loop;

/** Base of the runtime failures of the loop layer (a driver failing, a wait cancelled, a channel closed). */
class LoopException extends \Exception {}
