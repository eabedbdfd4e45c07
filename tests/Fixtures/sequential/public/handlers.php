<?php

declare(strict_types=1);
// What handlers does a script find, and leave behind?
$previousError = set_error_handler(static fn(): bool => true);
set_error_handler(static fn(): bool => true);
$previousException = set_exception_handler(static function (Throwable $e): void {});
echo json_encode(['error' => $previousError === null, 'exception' => $previousException === null]);
