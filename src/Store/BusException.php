<?php

declare(strict_types=1);

namespace Kiln\Store;

/** A message the bus could not hand on; the message names what was lost. */
final class BusException extends StoreException {}
