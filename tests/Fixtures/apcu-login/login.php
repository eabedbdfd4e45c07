<?php

declare(strict_types=1);

// Keeps a login in APCu, as apps do that pick APCu for their sessions: only processes that share one
// APCu segment see it.
$token = bin2hex(random_bytes(16));
apcu_store('login:' . $token, ['user' => 'alice', 'pid' => getmypid()], 3600);
header('Set-Cookie: token=' . $token . '; Path=/');
echo 'logged in';
