<?php

declare(strict_types=1);

// A script that answers HEAD as DAViCal does: the length of what a GET would send, and no body.
$body = 'BEGIN:VCALENDAR END:VCALENDAR';
header('Content-Length: ' . strlen($body));
if ($_SERVER['REQUEST_METHOD'] !== 'HEAD') {
    echo $body;
}
