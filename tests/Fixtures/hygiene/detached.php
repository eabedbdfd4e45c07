<?php

declare(strict_types=1);

// A process a request starts in the background and leaves (`nohup ... &`), for ProcessHygieneTest: its parent
// exits at once, so it is given to the supervisor. Usage: php detached.php MARKER term|deaf
// It writes its pid to MARKER; on SIGTERM, "term" writes " term" and exits, "deaf" ignores it. It ends by
// itself after 60 s at most.

[, $marker, $mode] = $argv + [1 => '', 2 => 'term'];
pcntl_async_signals(true);
if ($mode === 'deaf') {
    pcntl_signal(SIGTERM, SIG_IGN);
} else {
    pcntl_signal(SIGTERM, static function () use ($marker): void {
        file_put_contents($marker, ' term', FILE_APPEND);
        exit(0);
    });
}
file_put_contents($marker, (string) getmypid());
$until = microtime(true) + 60.0;
while (microtime(true) < $until) {
    usleep(100_000);
}
