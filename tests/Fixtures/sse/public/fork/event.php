<?php

declare(strict_types=1);

// A classic script of the fork tier publishing an SSE event (docs/realtime.md).
require_once dirname(__DIR__, 5) . '/src/bootstrap.php';

$topic = $_GET['topic'] ?? 'news';
$message = $_GET['m'] ?? '';
\Kiln\Http\Realtime\ScriptPublisher::event(\is_string($topic) ? $topic : 'news', \is_string($message) ? $message : '', 'fork');
header('Content-Type: text/plain');
echo 'published';
