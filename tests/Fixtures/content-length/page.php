<?php

declare(strict_types=1);

// A page that sets no length: ?empty prints nothing, ?status sets one.
if (isset($_GET['status'])) {
    http_response_code((int) $_GET['status']);
}
if (!isset($_GET['empty'])) {
    echo 'hello';
}
