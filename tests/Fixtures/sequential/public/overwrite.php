<?php

declare(strict_types=1);

// Overwrites every global the worker had (bin/kiln's $env among them), then checks nothing of it stays.
if (isset($_GET['check'])) {
    foreach ($GLOBALS as $name => $value) {
        if ($value === 'overwritten by a script') {
            exit("leaked: $name");
        }
    }
    echo 'no leak';
    return;
}
foreach (array_keys($GLOBALS) as $name) {
    if (!str_starts_with($name, '_')) {
        $GLOBALS[$name] = 'overwritten by a script';
    }
}
echo 'overwritten';
