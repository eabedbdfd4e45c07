<?php

declare(strict_types=1);

require_once __DIR__ . '/once-direct.php';
echo json_encode(['ran' => $onceDirect ?? null, 'included' => array_map('basename', get_included_files())]);
