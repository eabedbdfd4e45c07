<?php

declare(strict_types=1);

require_once __DIR__ . '/lib/config.php';
require_once __DIR__ . '/lib/helpers.php';
echo json_encode(['config' => $config['name'] ?? null, 'helper' => kiln_sequential_helper(), 'helpers_variable' => $helpersTopLevel ?? null]);
