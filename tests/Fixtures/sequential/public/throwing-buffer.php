<?php

declare(strict_types=1);

// A buffer whose handler throws when the buffer is flushed at the end of the request; a header and a
// setting the reset after it must undo.
header('X-Leaked: from throwing-buffer.php');
ini_set('precision', '5');
ob_start(static function (string $buffer, int $phase): string {
    if (($phase & PHP_OUTPUT_HANDLER_FINAL) !== 0) {
        throw new RuntimeException('the output handler failed');
    }
    return $buffer;
});
echo 'page;';
