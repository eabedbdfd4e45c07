<?php

declare(strict_types=1);

// A method map: GET and POST only (others get 405). Keys are upper-cased at mount.
return [
    'get' => static fn(): string => 'users.index.get',
    'POST' => static fn(): string => 'users.index.post',
];
