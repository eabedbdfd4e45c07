<?php

declare(strict_types=1);

// The same lines publish from every tier (isolated tier).
require_once dirname(__DIR__, 5) . '/src/bootstrap.php';

$message = $_GET['m'] ?? '';
\Kiln\Store\Publish::to('news', \is_string($message) ? $message : '');
header('Content-Type: application/json');
echo json_encode(['pid' => getmypid(), 'socket' => $_SERVER['KILN_BUS_SOCKET'] ?? null]);
