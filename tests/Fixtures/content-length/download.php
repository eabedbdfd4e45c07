<?php

declare(strict_types=1);

// A download script: its own Content-Length, then the file in pieces, flushed as it goes (past the 1 MiB the
// isolated tier holds to send a page whole, so every tier streams it).
$size = 2 * 1024 * 1024;
header('Content-Type: application/octet-stream');
header("Content-Length: $size");
if ($_SERVER['REQUEST_METHOD'] === 'HEAD') {
    return;
}
for ($sent = 0; $sent < $size; $sent += 65536) {
    echo str_repeat(\chr(97 + intdiv($sent, 65536) % 26), 65536);
    flush();
}
