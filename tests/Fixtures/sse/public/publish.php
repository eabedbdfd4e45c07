<?php

declare(strict_types=1);

// A classic script (sequential tier, in the worker) publishing an SSE event: docs/realtime.md.
$topic = $_GET['topic'] ?? 'news';
$message = $_GET['m'] ?? '';
$hub = new \Kiln\Http\Realtime\Hub(\Kiln\Store\NodeBus::get(), \Kiln\Store\NodeState::get());
header('Content-Type: text/plain');
echo $hub->publish(\is_string($topic) ? $topic : 'news', \is_string($message) ? $message : '', 'script');
