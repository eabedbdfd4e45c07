<?php

declare(strict_types=1);

http_response_code(201);
header('X-Script: headers');
setcookie('a', '1');
setcookie('b', '2');
error_log('a line for the error log');
trigger_error('a deprecation for the error log', E_USER_DEPRECATED);
echo 'made ', $_SERVER['REQUEST_METHOD'], ' ', $_SERVER['SCRIPT_NAME'], ' ', $_SERVER['QUERY_STRING'];
