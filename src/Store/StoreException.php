<?php

declare(strict_types=1);

namespace Kiln\Store;

/** The backing of a store failed (shared memory, a file, a server, the bus); the layer's runtime failure base. */
class StoreException extends \RuntimeException {}
