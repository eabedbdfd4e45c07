<?php

declare(strict_types=1);
echo json_encode(['input' => file_get_contents('php://input'), 'again' => file_get_contents('php://input'), 'post' => $_POST]);
