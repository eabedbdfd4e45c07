<?php

declare(strict_types=1);

$login = apcu_fetch('login:' . ($_COOKIE['token'] ?? ''));
header('Content-Type: text/plain');
echo is_array($login) ? 'user=' . $login['user'] : 'anonymous', ' pid=', getmypid();
