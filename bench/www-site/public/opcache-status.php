<?php

declare(strict_types=1);
// Used by bench/run to confirm opcache is on in the peer stacks (php-fpm, mod_php).
$s = function_exists('opcache_get_status') ? opcache_get_status(false) : false;
echo is_array($s) && !empty($s['opcache_enabled']) ? 'opcache:on' : 'opcache:off';
