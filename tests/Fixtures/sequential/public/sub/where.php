<?php

declare(strict_types=1);
echo json_encode(['cwd' => getcwd(), 'relative' => file_exists('where.php'), 'self' => $_SERVER['PHP_SELF'], 'script' => $_SERVER['SCRIPT_NAME']]);
