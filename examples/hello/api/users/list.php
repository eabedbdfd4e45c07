<?php

declare(strict_types=1);

use Kiln\Http\Request;

// GET /api/users/list?limit=N
return [
    'GET' => function (Request $request): array {
        $limit = max(1, min(100, (int) ($request->query()['limit'] ?? 3)));
        return ['users' => array_map(fn(int $id) => ['id' => $id, 'name' => "User $id"], range(1, $limit))];
    },
];
