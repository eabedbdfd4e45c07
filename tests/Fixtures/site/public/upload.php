<?php

declare(strict_types=1);

// An upload form handler: GET shows the form; POST moves every uploaded file with move_uploaded_file()
// and reports, per file, what was received and whether the move worked (the moved copies are deleted).

if ($_SERVER['REQUEST_METHOD'] !== 'POST') {
    echo '<!doctype html><form method="post" enctype="multipart/form-data">'
        . '<input type="file" name="one"><input type="file" name="many[]" multiple>'
        . '<input name="note"><button>Send</button></form>';
    return;
}

$flat = [];
foreach ($_FILES as $field => $info) {
    foreach ((array) $info['tmp_name'] as $key => $tmp) {
        $one = static fn(string $k): mixed => is_array($info[$k]) ? $info[$k][$key] : $info[$k];
        $flat[is_array($info['tmp_name']) ? "{$field}[$key]" : $field] = [
            'name' => $one('name'), 'type' => $one('type'), 'size' => $one('size'), 'error' => $one('error'), 'tmp' => $tmp,
        ];
    }
}
$report = [];
foreach ($flat as $name => $file) {
    $target = tempnam(sys_get_temp_dir(), 'parity-upload-');
    $moved = $file['tmp'] !== '' && move_uploaded_file($file['tmp'], $target);
    $report[$name] = [
        'name' => $file['name'], 'type' => $file['type'], 'size' => $file['size'], 'error' => $file['error'],
        'is_uploaded_file_after_move' => is_uploaded_file($file['tmp']), 'moved' => $moved,
        'md5' => $moved ? md5_file($target) : null, 'bytes' => $moved ? filesize($target) : null,
    ];
    @unlink($target);
}
header('Content-Type: application/json');
echo json_encode(['post' => $_POST, 'uploads' => $report], JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES) . "\n";
