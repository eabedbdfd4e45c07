<?php

declare(strict_types=1);

// Publishes, then ends with exit(): on the sequential tier that ends the worker, which must still send it.
// ?size=N publishes N bytes: more than the link to the supervisor takes at once, so some is left to write at exit.
require_once dirname(__DIR__, 4) . '/src/bootstrap.php';

$message = isset($_GET['size']) ? str_repeat('x', (int) $_GET['size']) : $_GET['m'] ?? '';
\Kiln\Store\Publish::to('news', \is_string($message) ? $message : '');
echo getmypid();
exit;
