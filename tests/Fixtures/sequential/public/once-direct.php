<?php

declare(strict_types=1);

// Requested directly and also pulled in by once-caller.php with require_once: under php-fpm each request runs it.
$onceDirect = ($onceDirect ?? 0) + 1;
if (basename($_SERVER['SCRIPT_NAME']) === 'once-direct.php') {
    echo json_encode(['included' => array_map('basename', get_included_files())]);
}
