<?php

declare(strict_types=1);

// Private (leading '_'): not a route; list.php uses it.
return static fn(string $what): string => 'users.' . $what;
