<?php

declare(strict_types=1);

// fixed-buffer.php under an error handler that turns every notice into an exception: ending the buffer at
// the end of the request must not raise one.
set_error_handler(static function (int $type, string $message): never {
    throw new ErrorException($message, 0, $type);
});
ob_start(null, 0, PHP_OUTPUT_HANDLER_STDFLAGS & ~PHP_OUTPUT_HANDLER_REMOVABLE);
echo 'fixed page under a strict error handler;';
