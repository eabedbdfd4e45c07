<?php

declare(strict_types=1);
header('Content-Type: application/json');
echo json_encode(['level' => ob_get_level(), 'names' => ob_list_handlers(), 'name' => ob_get_status()['name'] ?? null]);
