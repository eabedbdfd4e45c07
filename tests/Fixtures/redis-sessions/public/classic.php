<?php

declare(strict_types=1);

session_start();
$_SESSION['visits'] = ($_SESSION['visits'] ?? 0) + 1;
$_SESSION['classic'] = 'set by ' . ini_get('session.save_handler') . ' in ' . PHP_SAPI;
header('Content-Type: application/json');
echo json_encode(['visits' => $_SESSION['visits'], 'id' => session_id()]);
