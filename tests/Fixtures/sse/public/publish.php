<?php

declare(strict_types=1);

// A classic script (sequential tier, in the worker) publishing an SSE event: docs/realtime.md.
$hub = new \Kiln\Http\Realtime\Hub(\Kiln\Store\NodeBus::get(), \Kiln\Store\NodeState::get());
header('Content-Type: text/plain');
echo $hub->publish((string) ($_GET['topic'] ?? 'news'), (string) ($_GET['m'] ?? ''), 'script');
