<?php

declare(strict_types=1);

// The length of its GET body, and exit(): a response sent as the process ends, on the sequential tier.
$body = str_repeat('x', 42);
header('Content-Length: ' . strlen($body));
if ($_SERVER['REQUEST_METHOD'] !== 'HEAD') {
    echo $body;
}
exit();
