<?php

declare(strict_types=1);

// What the fork tier's script sees of the bus meta-variables (a client's headers must not change them).
header('Content-Type: application/json');
echo json_encode([
    'socket' => $_SERVER['KILN_BUS_SOCKET'] ?? null,
    'token' => $_SERVER['KILN_BUS_TOKEN'] ?? null,
    'env' => getenv('KILN_BUS_SOCKET'),
]);
