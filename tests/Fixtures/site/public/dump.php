<?php

declare(strict_types=1);

// Parity fixture: prints, as JSON, what a PHP script sees of its request and of the response it is building.
// Served unchanged by nginx+php-fpm and by each Kiln tier; tests/Integration/Parity compares the answers.
// Query parameters that change the response: status=NNN (http_response_code), location=URL (header Location).

session_start();
$_SESSION['visits'] = ($_SESSION['visits'] ?? 0) + 1;

header('Content-Type: application/json; charset=utf-8');
header('X-Parity-Single: one');
header('X-Parity-Multi: a');
header('X-Parity-Multi: b', false);
header('X-Parity-Removed: gone');
header_remove('X-Parity-Removed');
header('X-Parity-Replaced: old');
header('X-Parity-Replaced: new');
setcookie('parity_plain', 'value with space;=', ['path' => '/', 'httponly' => true, 'samesite' => 'Lax']);
setrawcookie('parity_raw', 'raw%20value', ['path' => '/sub']);
if (isset($_GET['status']) && is_string($_GET['status'])) {
    http_response_code((int) $_GET['status']);
}
if (isset($_GET['location']) && is_string($_GET['location'])) {
    header('Location: ' . $_GET['location']);
}

/** $_FILES with each tmp_name replaced by what can be compared: whether it is an uploaded file, and its md5. */
$files = static function (mixed $tmp) use (&$files): mixed {
    if (is_array($tmp)) {
        return array_map($files, $tmp);
    }
    return is_string($tmp) && $tmp !== ''
        ? ['is_uploaded_file' => is_uploaded_file($tmp), 'md5' => md5_file($tmp)]
        : $tmp;
};
$uploads = [];
foreach ($_FILES as $field => $info) {
    $info['tmp_name'] = $files($info['tmp_name']);
    $uploads[$field] = $info;
}

$input = (string) file_get_contents('php://input');
// The request headers by name: their order is each SAPI's own (php-fpm lists them backwards, mod_php as sent).
$getallheaders = getallheaders();
ksort($getallheaders);
$apacheRequestHeaders = apache_request_headers();
ksort($apacheRequestHeaders);
$getenv = [];
foreach (['REQUEST_METHOD', 'QUERY_STRING', 'REMOTE_ADDR', 'SCRIPT_NAME', 'HTTP_HOST'] as $name) {
    $getenv[$name] = getenv($name);
}

echo json_encode([
    'server' => $_SERVER,
    'get' => $_GET,
    'post' => $_POST,
    'cookie' => $_COOKIE,
    'files' => $uploads,
    'request' => $_REQUEST,
    'input' => strlen($input) <= 4096 ? $input : ['length' => strlen($input), 'md5' => md5($input)],
    'getenv' => $getenv,
    'getallheaders' => $getallheaders,
    'apache_request_headers' => $apacheRequestHeaders,
    'headers_list' => headers_list(),
    'headers_sent' => headers_sent(),
    'http_response_code' => http_response_code(),
    'session' => ['name' => session_name(), 'id' => session_id(), 'status' => session_status(), 'visits' => $_SESSION['visits']],
    'included' => get_included_files(),
], JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE) . "\n";
