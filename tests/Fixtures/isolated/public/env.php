<?php

declare(strict_types=1);

header('Content-Type: application/json');
echo json_encode([
    'passed' => getenv('KILN_TEST_PASSED'),
    'secret' => getenv('KILN_TEST_SECRET'),
    'path' => getenv('PATH'),
    'memory_limit' => ini_get('memory_limit'),
    'proxy' => $_SERVER['HTTP_PROXY'] ?? null,
    'host' => $_SERVER['HTTP_HOST'] ?? null,
    'jit' => (opcache_get_status(false) ?: [])['jit']['on'] ?? null,
]);
