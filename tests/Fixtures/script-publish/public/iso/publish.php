<?php

declare(strict_types=1);

// A classic script of the isolated tier (a php-cgi child): publishes the same text to a topic (SSE) and a room (WebSocket).
require_once dirname(__DIR__, 5) . '/src/bootstrap.php';

$name = is_string($_GET['to'] ?? null) ? $_GET['to'] : 'news';
$text = is_string($_GET['m'] ?? null) ? $_GET['m'] : '';
\Kiln\Http\Realtime\ScriptPublisher::event($name, $text);
\Kiln\Http\Realtime\ScriptPublisher::broadcast($name, $text);
header('Content-Type: text/plain');
echo 'published';
