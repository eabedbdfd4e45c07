<?php

declare(strict_types=1);
// Is a path from an earlier request still accepted? It must not be.
echo json_encode(['is_uploaded' => is_uploaded_file((string) ($_GET['path'] ?? ''))]);
