<?php

declare(strict_types=1);

header('Content-Type: application/json');
echo json_encode(['input' => strlen(file_get_contents('php://input')), 'md5' => md5(file_get_contents('php://input')), 'post' => $_POST]);
