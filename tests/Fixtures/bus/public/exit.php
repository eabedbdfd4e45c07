<?php

declare(strict_types=1);

// Publishes, then ends with exit(): on the sequential tier that ends the worker, which must still send it.
require_once dirname(__DIR__, 4) . '/src/bootstrap.php';

$message = $_GET['m'] ?? '';
\Kiln\Store\Publish::to('news', \is_string($message) ? $message : '');
echo getmypid();
exit;
