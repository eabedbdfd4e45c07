<?php

declare(strict_types=1);

$label = require __DIR__ . '/_helper.php';

return static fn(): string => $label('list');
