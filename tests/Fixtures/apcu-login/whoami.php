<?php

declare(strict_types=1);

$token = $_COOKIE['token'] ?? '';
$login = apcu_fetch('login:' . (is_string($token) ? $token : ''));
header('Content-Type: text/plain');
echo is_array($login) && is_string($login['user'] ?? null) ? 'user=' . $login['user'] : 'anonymous', ' pid=', getmypid();
