<?php

declare(strict_types=1);

// A classic script of the sequential tier publishing an SSE event (docs/realtime.md).
require_once dirname(__DIR__, 4) . '/src/bootstrap.php';

$topic = $_GET['topic'] ?? 'news';
$message = $_GET['m'] ?? '';
\Kiln\Http\Realtime\ScriptPublisher::event(\is_string($topic) ? $topic : 'news', \is_string($message) ? $message : '', 'sequential');
header('Content-Type: text/plain');
echo 'published';
