<?php

declare(strict_types=1);
// An exception handler the script sets gets its uncaught exception, as under php-fpm.
set_exception_handler(static function (Throwable $e): void {
    http_response_code(503);
    echo 'handled: ', $e->getMessage();
});
throw new RuntimeException('to the handler');
