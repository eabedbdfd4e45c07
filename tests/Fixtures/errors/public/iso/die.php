<?php

declare(strict_types=1);
// The php-cgi child dies in the middle of the request.
echo 'partial';
flush();
exec('kill -9 ' . getmypid());
sleep(5);
