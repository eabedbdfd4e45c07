<?php

declare(strict_types=1);
$file = $_FILES['doc'] ?? null;
$target = sys_get_temp_dir() . '/kiln-sequential-upload-' . getmypid() . '-' . bin2hex(random_bytes(4));
$result = [
    'file' => $file,
    'is_uploaded' => $file !== null && is_uploaded_file($file['tmp_name']),
    'fake_is_uploaded' => is_uploaded_file(__FILE__),
    'fake_moved' => @move_uploaded_file(__FILE__, $target . '-fake'),
];
$result['moved'] = $file !== null && move_uploaded_file($file['tmp_name'], $target);
$result['content'] = $result['moved'] ? file_get_contents($target) : null;
$result['still_uploaded'] = $file !== null && is_uploaded_file($file['tmp_name']);
@unlink($target);
echo json_encode($result);
