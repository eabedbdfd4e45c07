<?php

declare(strict_types=1);
header('X-One: 1');
header('X-Multi: a');
header('X-Multi: b', false);
header('X-Removed: yes');
header_remove('X-Removed');
setcookie('plain', 'va lue', ['path' => '/', 'httponly' => true]);
setrawcookie('raw', 'r%20w');
http_response_code(201);
echo json_encode(['list' => headers_list(), 'sent' => headers_sent(), 'code' => http_response_code()]);
