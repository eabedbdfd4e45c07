<?php

declare(strict_types=1);

// $_POST and $_FILES as the script sees them, a temporary file as whether it exists.
$files = [];
foreach ($_FILES as $field => $file) {
    $file['tmp_name'] = array_map(static fn(string $path): bool => $path !== '' && is_file($path), (array) $file['tmp_name']);
    $files[$field] = $file;
}
header('Content-Type: application/json');
echo json_encode(['post' => $_POST, 'files' => $files]);
