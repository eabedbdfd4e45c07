<?php

declare(strict_types=1);

// Ends every buffer (Kiln's too), then opens two: the upper one's handler throws at the end of the request,
// the lower one's must then not be called (PHP drops it).
while (ob_get_level() > 0) {
    ob_end_clean();
}
ob_start(static function (string $buffer): string {
    error_log('kiln-test: the lower handler was called');
    return $buffer;
});
ob_start(static function (string $buffer, int $phase): string {
    if (($phase & PHP_OUTPUT_HANDLER_FINAL) !== 0) {
        throw new RuntimeException('the upper handler failed');
    }
    return $buffer;
});
echo 'page;';
