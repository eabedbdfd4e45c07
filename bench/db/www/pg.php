<?php

declare(strict_types=1);

// A point select through PDO with a persistent connection (the fastest way a classic stack has).
$config = require __DIR__ . '/config.php';
$url = parse_url($config['pg']);
$db = new PDO("pgsql:host={$url['host']};port={$url['port']};dbname=" . ltrim($url['path'], '/'), $url['user'], $url['pass'], [PDO::ATTR_PERSISTENT => true, PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
$statement = $db->prepare('SELECT id, name FROM items WHERE id = ?');
$statement->execute([random_int(1, 10000)]);
header('Content-Type: application/json');
echo json_encode($statement->fetch(PDO::FETCH_ASSOC));
