<?php

declare(strict_types=1);

// A download script that answers HEAD with its headers alone, as Symfony's BinaryFileResponse does; ?exit=1
// ends it with exit() after the headers, as scripts that send a file and stop do.
header('Content-Type: text/plain');
header('Content-Length: 11');
if ($_SERVER['REQUEST_METHOD'] === 'HEAD') {
    if (isset($_GET['exit'])) {
        exit;
    }
    return;
}
echo 'hello world';
