<?php

declare(strict_types=1);
session_start();
$_SESSION['visits'] = ($_SESSION['visits'] ?? 0) + 1;
if (isset($_GET['owner'])) {
    $_SESSION['owner'] = $_GET['owner'];
}
echo json_encode(['id' => session_id(), 'visits' => $_SESSION['visits'], 'owner' => $_SESSION['owner'] ?? null]);
