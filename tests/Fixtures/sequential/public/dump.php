<?php

declare(strict_types=1);
// Everything a script sees of its request, as JSON.
header('Content-Type: application/json');
echo json_encode([
    'get' => $_GET,
    'post' => $_POST,
    'cookie' => $_COOKIE,
    'files' => $_FILES,
    'request' => $_REQUEST,
    'env' => $_ENV,
    'server' => $_SERVER,
    'input' => file_get_contents('php://input'),
    'cwd' => getcwd(),
    'ob_level' => ob_get_level(),
    'headers_sent' => headers_sent(),
    'status' => http_response_code(),
    'error_handler' => set_error_handler(null) === null,
    'globals' => array_values(array_diff(array_keys($GLOBALS), ['GLOBALS', '_GET', '_POST', '_COOKIE', '_FILES', '_SERVER', '_REQUEST', '_ENV'])),
], JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES);
